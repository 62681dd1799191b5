package rules

import "strings"

// Destructive forms. Each entry says which words of the command make it
// destructive (its triggers); an allowed pattern covers the destructive form
// only when it depends on those words, so "git *" or "*" does not cover
// "git push --force" while "git push --force *" does.
//
//	command                 destructive when                         triggers
//	rm                      -r, -R, --recursive                      that option
//	find                    -delete                                  -delete
//	truncate, shred,        always                                   the command name
//	wipefs, mkfs, mkfs.*
//	dd                      of=FILE                                  of=...
//	chmod, chown, chgrp     -R, --recursive                          that option
//	rsync                   --delete*, --remove-source-files         that option
//	git reset               --hard, --merge                          that option
//	git clean               -f/--force (not with -n/--dry-run)       that option
//	git checkout            -f, --force, -B, --ours, --theirs, --,   that word
//	                        ., a path operand that exists
//	git restore             unless only --staged                     restore
//	git switch              -f, --force, --discard-changes, -C       that option
//	git push                -f, --force*, -d, --delete, --mirror,    that word
//	                        --prune, +REFSPEC, :REF
//	git branch              -D, -M, -C, -d/--delete with -f/--force  that option
//	git tag                 -d, --delete, -f, --force                that option
//	git stash               drop, clear                              that word
//	git rebase              unless --abort/--continue/--quit         rebase
//	git filter-branch,      always                                   the subcommand
//	git filter-repo,
//	git prune, git update-ref
//	git gc                  --prune*                                 that option
//	git reflog              expire, delete                           that word
//	git worktree remove     -f, --force                              that option
//	git rm                  -f, --force                              that option
//	docker, podman          rm, rmi, prune, compose down -v          that word
//	kubectl                 delete                                   delete
//	helm                    uninstall, delete                        that word
//	terraform, tofu         destroy, apply -destroy, state rm        that word
//
// Redirections that truncate a file (> file) are not in the table: they
// are writes inside the project like WriteFile, which edit mode allows.
func Destructive(argv []string, exists func(string) bool) (why string, triggers []int) {
	if len(argv) == 0 {
		return "", nil
	}
	name := argv[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	args := argv[1:]
	at := func(i int) []int { return []int{i + 1} } // index in args -> in argv
	switch {
	case name == "rm":
		if i := optIndex(args, "rR", "recursive"); i >= 0 {
			return "rm -r deletes whole directory trees", at(i)
		}
	case name == "find":
		for i, a := range args {
			if a == "-delete" {
				return "find -delete deletes every file it finds", at(i)
			}
		}
	case name == "truncate" || name == "shred" || name == "wipefs" || name == "mkfs" || strings.HasPrefix(name, "mkfs."):
		return name + " destroys the contents of what it is given", []int{0}
	case name == "dd":
		for i, a := range args {
			if strings.HasPrefix(a, "of=") {
				return "dd of= overwrites its output file or device", at(i)
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp":
		if i := optIndex(args, "R", "recursive"); i >= 0 {
			return name + " -R changes a whole directory tree", at(i)
		}
	case name == "rsync":
		for i, a := range args {
			if strings.HasPrefix(a, "--del") || a == "--remove-source-files" {
				return "rsync " + a + " deletes files", at(i)
			}
		}
	case name == "git":
		return gitDestructive(argv, exists)
	case name == "docker" || name == "podman":
		ops := operandIndexes(args)
		for k, i := range ops {
			switch args[i] {
			case "rm", "rmi", "prune":
				return name + " " + args[i] + " deletes containers, images or volumes", at(i)
			case "down":
				if k > 0 && args[ops[k-1]] == "compose" {
					if j := optIndex(args[i:], "v", "volumes"); j >= 0 {
						return name + " compose down -v deletes volumes", at(i + j)
					}
				}
			}
			if k >= 1 {
				break
			}
		}
	case name == "kubectl":
		if ops := operandIndexes(args); len(ops) > 0 && args[ops[0]] == "delete" {
			return "kubectl delete deletes cluster resources", at(ops[0])
		}
	case name == "helm":
		if ops := operandIndexes(args); len(ops) > 0 && (args[ops[0]] == "uninstall" || args[ops[0]] == "delete") {
			return "helm " + args[ops[0]] + " removes a release", at(ops[0])
		}
	case name == "terraform" || name == "tofu":
		ops := operandIndexes(args)
		if len(ops) == 0 {
			break
		}
		switch sub := args[ops[0]]; {
		case sub == "destroy":
			return name + " destroy destroys infrastructure", at(ops[0])
		case sub == "state" && len(ops) > 1 && args[ops[1]] == "rm":
			return name + " state rm forgets infrastructure", at(ops[1])
		case sub == "apply":
			for i, a := range args {
				if a == "-destroy" || a == "--destroy" {
					return name + " apply -destroy destroys infrastructure", at(i)
				}
			}
		}
	}
	return "", nil
}

// gitDestructive classifies git's destructive forms (see destructive).
func gitDestructive(argv []string, exists func(string) bool) (string, []int) {
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
	if k >= len(argv) {
		return "", nil
	}
	sub, rest := argv[k], argv[k+1:]
	at := func(i int) []int { return []int{k + 1 + i} }
	has := func(names ...string) bool {
		for _, a := range rest {
			for _, n := range names {
				if a == n {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "reset":
		for i, a := range rest {
			if a == "--hard" || a == "--merge" {
				return "git reset " + a + " discards uncommitted changes", at(i)
			}
		}
	case "clean":
		if optIndex(rest, "n", "dry-run") >= 0 {
			return "", nil
		}
		if i := optIndex(rest, "f", "force"); i >= 0 {
			return "git clean -f deletes untracked files", at(i)
		}
	case "checkout":
		var trig []int
		for i, a := range rest {
			switch {
			case a == "--" || a == "." || a == "--ours" || a == "--theirs" || a == "--force" || a == "-B" || strings.HasPrefix(a, "--pathspec-from-file"):
				trig = append(trig, at(i)...)
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "fB"):
				trig = append(trig, at(i)...)
			case !strings.HasPrefix(a, "-") && exists != nil && exists(a):
				trig = append(trig, at(i)...)
			}
		}
		if len(trig) > 0 {
			return "git checkout of paths (or with -f/-B) discards uncommitted changes", trig
		}
	case "restore":
		staged, worktree := has("--staged", "-S"), has("--worktree", "-W")
		if !staged || worktree || optIndex(rest, "W", "worktree") >= 0 {
			return "git restore discards uncommitted changes", []int{k}
		}
	case "switch":
		for i, a := range rest {
			if a == "-f" || a == "--force" || a == "--discard-changes" || a == "-C" || strings.HasPrefix(a, "--force-create") {
				return "git switch " + a + " discards changes or resets a branch", at(i)
			}
		}
	case "push":
		var trig []int
		for i, a := range rest {
			switch {
			case strings.HasPrefix(a, "--force") || a == "--delete" || a == "--mirror" || a == "--prune":
				trig = append(trig, at(i)...)
			case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "fd"):
				trig = append(trig, at(i)...)
			case strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":"):
				trig = append(trig, at(i)...)
			}
		}
		if len(trig) > 0 {
			return "git push with force, delete, mirror, prune or a +/: refspec rewrites or deletes remote history", trig
		}
	case "branch":
		del, force := -1, false
		for i, a := range rest {
			switch {
			case a == "--delete":
				del = i
			case a == "--force":
				force = true
			case len(a) > 1 && a[0] == '-' && a[1] != '-':
				if strings.ContainsAny(a[1:], "DMC") {
					return "git branch " + a + " deletes or overwrites a branch", at(i)
				}
				if strings.ContainsRune(a[1:], 'd') {
					del = i
				}
				force = force || strings.ContainsRune(a[1:], 'f')
			}
		}
		if del >= 0 && force {
			return "git branch -d --force deletes an unmerged branch", at(del)
		}
	case "tag":
		if i := optIndex(rest, "df", "delete"); i >= 0 {
			return "git tag -d/-f deletes or moves a tag", at(i)
		}
		if i := optIndex(rest, "", "force"); i >= 0 {
			return "git tag --force moves a tag", at(i)
		}
	case "stash":
		for i, a := range rest {
			if a == "drop" || a == "clear" {
				return "git stash " + a + " deletes stashed changes", at(i)
			}
		}
	case "rebase":
		if !has("--abort", "--continue", "--quit", "--show-current-patch") {
			return "git rebase rewrites history", []int{k}
		}
	case "filter-branch", "filter-repo", "prune", "update-ref":
		return "git " + sub + " rewrites or deletes history", []int{k}
	case "gc":
		for i, a := range rest {
			if strings.HasPrefix(a, "--prune") {
				return "git gc --prune deletes unreachable objects", at(i)
			}
		}
	case "reflog":
		for i, a := range rest {
			if a == "expire" || a == "delete" {
				return "git reflog " + a + " deletes reflog entries", at(i)
			}
		}
	case "worktree":
		if len(rest) > 0 && rest[0] == "remove" {
			if i := optIndex(rest, "f", "force"); i >= 0 {
				return "git worktree remove --force deletes a working tree with changes", at(i)
			}
		}
	case "rm":
		if i := optIndex(rest, "f", "force"); i >= 0 {
			return "git rm -f deletes files with uncommitted changes", at(i)
		}
	}
	return "", nil
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
		case letters != "" && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], letters):
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
