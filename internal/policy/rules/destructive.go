package rules

import (
	"slices"
	"strings"
)

// destructiveRule is one destructive form: the command (or git
// subcommand) it is for, how to find the words that make a call of it
// destructive (its triggers), and examples it must and must not call
// destructive, which TestDestructiveRules runs. An allowed pattern covers
// the destructive form only when it depends on the triggers, so "git *"
// or "*" does not cover "git push --force" while "git push --force *"
// does.
//
// Redirections that truncate a file (> file) are not in the table: they
// are writes inside the project like WriteFile, which edit mode allows.
type destructiveRule struct {
	// Names are the command names the rule is for; a git subcommand is
	// written "git SUB", a name prefix ends in "*" (mkfs.*).
	Names []string
	// Why says what the form destroys; {cmd} is the command ("git reset"),
	// {word} the first trigger word.
	Why string
	// Find returns the indexes in args (the words after the command or
	// git subcommand) of the triggers (self, -1, is the command word), and
	// a reason that replaces Why when the form needs its own (written
	// after the command: "compose down -v deletes volumes").
	Find finder
	// Match are commands (split at spaces) the rule must call
	// destructive; NotMatch those it must not.
	Match, NotMatch []string
}

// self marks the command word itself as the trigger.
const self = -1

// destructiveRules is the table of destructive forms.
var destructiveRules = []destructiveRule{
	{Names: []string{"rm"}, Why: "rm -r deletes whole directory trees", Find: opt("rR", "recursive"),
		Match: []string{"rm -r build", "rm -rf build", "rm -fR build", "rm --recursive build"}, NotMatch: []string{"rm build", "rm -f main.o"}},
	{Names: []string{"find"}, Why: "find -delete deletes every file it finds", Find: word("-delete"),
		Match: []string{"find . -name x -delete"}, NotMatch: []string{"find . -name x -print"}},
	{Names: []string{"truncate", "shred", "wipefs", "mkfs", "mkfs.*"}, Why: "{cmd} destroys the contents of what it is given", Find: always,
		Match: []string{"truncate -s 0 a", "shred a", "mkfs.ext4 disk.img"}},
	{Names: []string{"dd"}, Why: "dd of= overwrites its output file or device", Find: prefix("of="),
		Match: []string{"dd if=/dev/zero of=a"}, NotMatch: []string{"dd if=a"}},
	{Names: []string{"chmod", "chown", "chgrp"}, Why: "{cmd} -R changes a whole directory tree", Find: opt("R", "recursive"),
		Match: []string{"chmod -R 777 sub", "chown -R nobody sub"}, NotMatch: []string{"chmod 644 a"}},
	{Names: []string{"rsync"}, Why: "rsync {word} deletes files", Find: match(func(a string) bool { return strings.HasPrefix(a, "--del") || a == "--remove-source-files" }),
		Match: []string{"rsync -a --delete sub/ tests/", "rsync --remove-source-files a b"}, NotMatch: []string{"rsync -a a b"}},
	{Names: []string{"docker", "podman"}, Why: "{cmd} {word} deletes containers, images or volumes", Find: dockerDeletes,
		Match:    []string{"docker system prune -a", "docker rm -f web", "podman rmi img", "docker compose down -v"},
		NotMatch: []string{"docker run --rm img", "docker compose down", "docker run img rm"}},
	{Names: []string{"kubectl"}, Why: "kubectl delete deletes cluster resources", Find: firstOperand("delete"),
		Match: []string{"kubectl delete pod web"}, NotMatch: []string{"kubectl get pods"}},
	{Names: []string{"helm"}, Why: "helm {word} removes a release", Find: firstOperand("uninstall", "delete"),
		Match: []string{"helm uninstall web", "helm delete web"}, NotMatch: []string{"helm list"}},
	{Names: []string{"terraform", "tofu"}, Why: "{cmd} destroys or forgets infrastructure", Find: terraformDestroys,
		Match:    []string{"terraform destroy", "terraform apply -destroy", "tofu state rm x"},
		NotMatch: []string{"terraform plan", "terraform apply", "terraform state list"}},

	{Names: []string{"git reset"}, Why: "git reset {word} discards uncommitted changes", Find: word("--hard", "--merge"),
		Match: []string{"git reset --hard HEAD~1", "git reset --merge"}, NotMatch: []string{"git reset HEAD a"}},
	{Names: []string{"git clean"}, Why: "git clean -f deletes untracked files", Find: unless(opt("n", "dry-run"), opt("f", "force")),
		Match: []string{"git clean -fdx"}, NotMatch: []string{"git clean -n", "git clean -fn"}},
	{Names: []string{"git checkout"}, Why: "git checkout of paths (or with -f/-B) discards uncommitted changes", Find: gitCheckoutDiscards,
		Match:    []string{"git checkout -- .", "git checkout .", "git checkout -f main", "git checkout --ours a"},
		NotMatch: []string{"git checkout main", "git checkout -b feature"}},
	{Names: []string{"git restore"}, Why: "git restore discards uncommitted changes", Find: gitRestoreDiscards,
		Match: []string{"git restore a", "git restore --staged --worktree a"}, NotMatch: []string{"git restore --staged a"}},
	{Names: []string{"git switch"}, Why: "git switch {word} discards changes or resets a branch", Find: match(func(a string) bool {
		return a == "-f" || a == "--force" || a == "--discard-changes" || a == "-C" || strings.HasPrefix(a, "--force-create")
	}),
		Match: []string{"git switch --discard-changes main", "git switch -C main"}, NotMatch: []string{"git switch main"}},
	{Names: []string{"git push"}, Why: "git push with force, delete, mirror, prune or a +/: refspec rewrites or deletes remote history", Find: gitPushRewrites,
		Match: []string{"git push --force origin main", "git push -f", "git push --force-with-lease", "git push origin +main",
			"git push origin :main", "git push --delete origin main", "git push --mirror"},
		NotMatch: []string{"git push origin main"}},
	{Names: []string{"git branch"}, Why: "git branch {word} deletes or overwrites a branch", Find: gitBranchDeletes,
		Match: []string{"git branch -D feature", "git branch -d -f feature", "git branch -M x"}, NotMatch: []string{"git branch -d feature", "git branch x"}},
	{Names: []string{"git tag"}, Why: "git tag -d/-f deletes or moves a tag", Find: gitTagMoves,
		Match: []string{"git tag -d v1", "git tag --force v1"}, NotMatch: []string{"git tag v1"}},
	{Names: []string{"git stash"}, Why: "git stash {word} deletes stashed changes", Find: word("drop", "clear"),
		Match: []string{"git stash drop", "git stash clear"}, NotMatch: []string{"git stash pop"}},
	{Names: []string{"git rebase"}, Why: "git rebase rewrites history", Find: unless(word("--abort", "--continue", "--quit", "--show-current-patch"), always),
		Match: []string{"git rebase main"}, NotMatch: []string{"git rebase --abort"}},
	{Names: []string{"git filter-branch", "git filter-repo", "git prune", "git update-ref"}, Why: "{cmd} rewrites or deletes history", Find: always,
		Match: []string{"git filter-branch --tree-filter x HEAD", "git update-ref -d refs/heads/x", "git prune"}},
	{Names: []string{"git gc"}, Why: "git gc --prune deletes unreachable objects", Find: prefix("--prune"),
		Match: []string{"git gc --prune=now"}, NotMatch: []string{"git gc"}},
	{Names: []string{"git reflog"}, Why: "git reflog {word} deletes reflog entries", Find: word("expire", "delete"),
		Match: []string{"git reflog expire --all"}, NotMatch: []string{"git reflog"}},
	{Names: []string{"git worktree"}, Why: "git worktree remove --force deletes a working tree with changes", Find: gitWorktreeForce,
		Match: []string{"git worktree remove --force wt"}, NotMatch: []string{"git worktree remove wt", "git worktree add -f wt"}},
	{Names: []string{"git rm"}, Why: "git rm -f deletes files with uncommitted changes", Find: opt("f", "force"),
		Match: []string{"git rm -f a"}, NotMatch: []string{"git rm a"}},
}

// destructiveIndex maps a command name (or "git SUB") to its rule;
// destructivePrefixes holds the rules of name prefixes.
var destructiveIndex, destructivePrefixes = func() (map[string]*destructiveRule, map[string]*destructiveRule) {
	exact, prefixes := map[string]*destructiveRule{}, map[string]*destructiveRule{}
	for i := range destructiveRules {
		for _, n := range destructiveRules[i].Names {
			if p, ok := strings.CutSuffix(n, "*"); ok {
				prefixes[p] = &destructiveRules[i]
				continue
			}
			exact[n] = &destructiveRules[i]
		}
	}
	return exact, prefixes
}()

// Destructive reports whether argv destroys work that cannot be recovered
// (the table destructiveRules): why says how, and triggers are the
// indexes in argv of the words that make it so. exists says whether an
// operand names an existing path (git checkout FILE); nil means none does.
func Destructive(argv []string, exists func(string) bool) (why string, triggers []int) {
	r, name, args, offset := destructiveRuleFor(argv)
	if r == nil {
		return "", nil
	}
	found, why := r.Find(args, exists)
	if len(found) == 0 {
		return "", nil
	}
	for _, i := range found {
		triggers = append(triggers, offset+i)
	}
	if why != "" {
		return name + " " + why, triggers
	}
	first := name
	if found[0] >= 0 {
		first = args[found[0]]
	}
	return strings.NewReplacer("{cmd}", name, "{word}", first).Replace(r.Why), triggers
}

// destructiveRuleFor finds the rule of argv, the command as the rule
// names it, the words after it and the index in argv of those words.
func destructiveRuleFor(argv []string) (r *destructiveRule, name string, args []string, offset int) {
	if len(argv) == 0 {
		return nil, "", nil, 0
	}
	name = argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == "git" {
		k := gitSubcommand(argv)
		if k >= len(argv) {
			return nil, "", nil, 0
		}
		name = "git " + argv[k]
		return destructiveIndex[name], name, argv[k+1:], k + 1
	}
	if r := destructiveIndex[name]; r != nil {
		return r, name, argv[1:], 1
	}
	for p, r := range destructivePrefixes {
		if strings.HasPrefix(name, p) {
			return r, name, argv[1:], 1
		}
	}
	return nil, "", nil, 0
}

// gitSubcommand is the index in argv of git's subcommand, past its
// global options (len(argv) when there is none).
func gitSubcommand(argv []string) int {
	k := 1
	for ; k < len(argv); k++ {
		a := argv[k]
		if !strings.HasPrefix(a, "-") {
			break
		}
		switch a {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			k++
		}
	}
	return k
}

// finder is a rule's Find.
type finder func(args []string, exists func(string) bool) (triggers []int, why string)

// always: the command itself is destructive.
func always([]string, func(string) bool) ([]int, string) { return []int{self}, "" }

// opt finds the first short option cluster holding one of letters, or
// --long (see optIndex).
func opt(letters, long string) finder {
	return func(args []string, _ func(string) bool) ([]int, string) {
		if i := optIndex(args, letters, long); i >= 0 {
			return []int{i}, ""
		}
		return nil, ""
	}
}

// match finds the first argument for which is holds.
func match(is func(a string) bool) finder {
	return func(args []string, _ func(string) bool) ([]int, string) {
		for i, a := range args {
			if is(a) {
				return []int{i}, ""
			}
		}
		return nil, ""
	}
}

// word finds the first argument that is one of words.
func word(words ...string) finder {
	return match(func(a string) bool { return slices.Contains(words, a) })
}

// prefix finds the first argument starting with p.
func prefix(p string) finder {
	return match(func(a string) bool { return strings.HasPrefix(a, p) })
}

// unless finds with f unless harmless finds something (a dry run, an
// abort).
func unless(harmless, f finder) finder {
	return func(args []string, exists func(string) bool) ([]int, string) {
		if t, _ := harmless(args, exists); len(t) > 0 {
			return nil, ""
		}
		return f(args, exists)
	}
}

// firstOperand finds the first operand when it is one of subs.
func firstOperand(subs ...string) finder {
	return func(args []string, _ func(string) bool) ([]int, string) {
		if ops := operandIndexes(args); len(ops) > 0 && slices.Contains(subs, args[ops[0]]) {
			return []int{ops[0]}, ""
		}
		return nil, ""
	}
}

// shortHas reports a short option cluster (-xyz) holding one of letters.
func shortHas(a, letters string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], letters)
}

// dockerDeletes: rm, rmi or prune as the first or second operand
// (docker rm, docker system prune), or compose down -v.
func dockerDeletes(args []string, _ func(string) bool) ([]int, string) {
	ops := operandIndexes(args)
	for k, i := range ops[:min(len(ops), 2)] {
		switch args[i] {
		case "rm", "rmi", "prune":
			return []int{i}, ""
		case "down":
			if k > 0 && args[ops[k-1]] == "compose" {
				if j := optIndex(args[i:], "v", "volumes"); j >= 0 {
					return []int{i + j}, "compose down -v deletes volumes"
				}
			}
		}
	}
	return nil, ""
}

// terraformDestroys: destroy, state rm, apply -destroy.
func terraformDestroys(args []string, _ func(string) bool) ([]int, string) {
	ops := operandIndexes(args)
	if len(ops) == 0 {
		return nil, ""
	}
	switch args[ops[0]] {
	case "destroy":
		return []int{ops[0]}, "destroy destroys infrastructure"
	case "state":
		if len(ops) > 1 && args[ops[1]] == "rm" {
			return []int{ops[1]}, "state rm forgets infrastructure"
		}
	case "apply":
		if t, _ := word("-destroy", "--destroy")(args, nil); len(t) > 0 {
			return t, "apply -destroy destroys infrastructure"
		}
	}
	return nil, ""
}

// gitCheckoutDiscards: every word that makes checkout overwrite the
// working tree: --, ., --ours/--theirs, -f/-B, a path that exists.
func gitCheckoutDiscards(args []string, exists func(string) bool) ([]int, string) {
	var trig []int
	for i, a := range args {
		switch {
		case a == "--" || a == "." || a == "--ours" || a == "--theirs" || a == "--force" || a == "-B" || strings.HasPrefix(a, "--pathspec-from-file"),
			shortHas(a, "fB"),
			!strings.HasPrefix(a, "-") && exists != nil && exists(a):
			trig = append(trig, i)
		}
	}
	return trig, ""
}

// gitRestoreDiscards: restore touches the working tree unless it is
// --staged alone.
func gitRestoreDiscards(args []string, _ func(string) bool) ([]int, string) {
	staged := slices.Contains(args, "--staged") || slices.Contains(args, "-S")
	worktree := slices.Contains(args, "--worktree") || slices.Contains(args, "-W") || optIndex(args, "W", "worktree") >= 0
	if !staged || worktree {
		return []int{self}, ""
	}
	return nil, ""
}

// gitPushRewrites: every force, delete, mirror or prune option and every
// +refspec or :ref.
func gitPushRewrites(args []string, _ func(string) bool) ([]int, string) {
	var trig []int
	for i, a := range args {
		if strings.HasPrefix(a, "--force") || a == "--delete" || a == "--mirror" || a == "--prune" ||
			shortHas(a, "fd") || strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":") {
			trig = append(trig, i)
		}
	}
	return trig, ""
}

// gitBranchDeletes: -D, -M, -C, or -d/--delete together with -f/--force.
func gitBranchDeletes(args []string, _ func(string) bool) ([]int, string) {
	del, force := -1, false
	for i, a := range args {
		switch {
		case a == "--delete":
			del = i
		case a == "--force":
			force = true
		case shortHas(a, "DMC"):
			return []int{i}, ""
		case shortHas(a, "df"):
			if strings.ContainsRune(a[1:], 'd') {
				del = i
			}
			force = force || strings.ContainsRune(a[1:], 'f')
		}
	}
	if del >= 0 && force {
		return []int{del}, "-d --force deletes an unmerged branch"
	}
	return nil, ""
}

// gitTagMoves: -d/-f/--delete, or --force.
func gitTagMoves(args []string, _ func(string) bool) ([]int, string) {
	if i := optIndex(args, "df", "delete"); i >= 0 {
		return []int{i}, ""
	}
	if i := optIndex(args, "", "force"); i >= 0 {
		return []int{i}, "--force moves a tag"
	}
	return nil, ""
}

// gitWorktreeForce: worktree remove with -f/--force.
func gitWorktreeForce(args []string, exists func(string) bool) ([]int, string) {
	if len(args) > 0 && args[0] == "remove" {
		return opt("f", "force")(args, exists)
	}
	return nil, ""
}

// optIndex returns the index of the first option among args that is a
// short cluster containing one of letters or --long (exactly, or as a
// --long=value), before "--"; -1 if none.
func optIndex(args []string, letters, long string) int {
	for i, a := range args {
		switch {
		case a == "--":
			return -1
		case long != "" && (a == "--"+long || strings.HasPrefix(a, "--"+long+"=")):
			return i
		case letters != "" && shortHas(a, letters):
			return i
		}
	}
	return -1
}

// operandIndexes are the indexes of args that are not options.
func operandIndexes(args []string) []int {
	var out []int
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, i)
		}
	}
	return out
}
