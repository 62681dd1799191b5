package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/policy/approve"
	"github.com/odin-code/odin/internal/policy/rules"
	"github.com/odin-code/odin/internal/policy/shell"
	"github.com/odin-code/odin/tools/tool"
)

// argsAreData are commands whose arguments are printed or compared, never
// opened or run.
func argsAreData(name string) bool {
	switch name {
	case "echo", "printf", "true", "false", ":", "test", "[", "expr", "exit", "return", "shift", "sleep", "set", "unset", "type", "which", "whereis", "help":
		return true
	}
	return false
}

// simple checks one simple command given as words, unwrapping wrappers.
func (w *walker) simple(argv []shell.Word, subject string, sc *scope) {
	cur, pathWords, dynamicInput, ok := w.peel(argv, subject, sc)
	if !ok {
		return
	}
	if len(cur) == 0 {
		w.paths(pathWords, subject, sc, true)
		return
	}
	name := cur[0].Text
	args := cur[1:]
	if why := w.c.guard.agentCommand(name, shell.Texts(args)); why != "" {
		w.deny(RuleAgentFilter, subject, why)
		return
	}
	allowed := w.allowedMatch(cur)
	readOnlyCmd := false
	switch {
	case strings.ContainsRune(name, '/'):
		pathWords = append(pathWords, cur[0])
		w.needsEdit(subject, name+" runs a program by path", allowed)
		w.destructive(cur, subject, sc, allowed)
		w.forbiddenSuffixes(cur, sc)
	case isShell(name):
		pathWords = append(pathWords, w.shell(cur, subject, sc, allowed)...)
	case name == "eval":
		w.unresolvable(subject, "eval runs a string as shell code")
		w.forbiddenScript(cur[1:], sc)
	case name == "source" || name == ".":
		w.unresolvable(subject, name+" runs a script file inside this shell")
		pathWords = append(pathWords, args...)
	case name == "trap":
		w.unresolvable(subject, "trap stores shell code to run later")
		w.forbiddenScript(cur[1:], sc)
	case name == "cd" || name == "pushd":
		w.cd(args, subject, sc)
		return
	default:
		readOnlyCmd = w.program(cur, subject, sc, allowed, dynamicInput)
		if argsAreData(name) {
			return
		}
		pathWords = append(pathWords, args...)
	}
	if dynamicInput != "" {
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: %s, so the paths they name cannot be checked", subject, dynamicInput))
	}
	w.paths(pathWords, subject, sc, readOnlyCmd)
	if readOnlyCmd && rules.FollowsLinks(name, shell.Texts(args)) {
		w.linksOut(args, subject, sc)
	}
}

// peel takes the wrappers (sudo, env, timeout, xargs...) off argv: cur is
// the command they run (nil when they run none), pathWords their own
// arguments, dynamicInput why the command gets arguments at run time. ok
// is false when the command cannot be known, which was reported.
func (w *walker) peel(argv []shell.Word, subject string, sc *scope) (cur, pathWords []shell.Word, dynamicInput string, ok bool) {
	cur = argv
	for len(cur) > 0 {
		name := cur[0]
		if !name.Static || name.Glob || name.Tilde {
			w.unresolvable(subject, fmt.Sprintf("the command name %s is not a plain word, so what runs cannot be known", name.Text))
			w.forbiddenSuffixes(cur, sc)
			return nil, nil, "", false
		}
		w.checkForbidden(cur, subject)
		inner, extra, why, wrapped := w.unwrap(cur, subject, sc)
		if !wrapped {
			break
		}
		pathWords = append(pathWords, extra...)
		if why != "" {
			dynamicInput = why
		}
		cur = inner
	}
	return cur, pathWords, dynamicInput, true
}

// program checks a command that is neither a shell nor a builtin that
// runs code: read-only by the rules, or it needs edit mode (and may be
// destructive). It reports whether the command is read-only.
func (w *walker) program(cur []shell.Word, subject string, sc *scope, allowed bool, dynamicInput string) bool {
	name, args := cur[0].Text, cur[1:]
	w.builtin(name, args, subject)
	if name == "git" {
		w.gitConfig(args, subject)
	}
	if name == "find" || name == "fd" || name == "fdfind" {
		for _, inner := range execArgs(name, args) {
			w.simple(inner, strings.Join(shell.Texts(inner), " "), sc.clone())
		}
	}
	ok, why := w.readOnly(name, args, sc, dynamicInput)
	if !ok {
		w.needsEdit(subject, why, allowed)
		w.destructive(cur, subject, sc, allowed)
		w.forbiddenSuffixes(cur, sc)
	}
	return ok
}

// readOnly applies the read-only rules to words: arguments known only at
// run time, a glob that matches an option-like file name, a git command
// in a repository that can run programs, or input from xargs void a
// verdict that depends on the arguments.
func (w *walker) readOnly(name string, args []shell.Word, sc *scope, dynamicInput string) (bool, string) {
	ok, why, sensitive := rules.ReadOnly(name, shell.Texts(args))
	if !ok {
		return false, why
	}
	for _, a := range args {
		if !sensitive {
			break
		}
		if !a.Static {
			return false, fmt.Sprintf("%s's arguments are only known at run time and could include an option that writes or runs", name)
		}
		if a.Glob && globMatchesOption(w.c.guard, a, sc) {
			return false, fmt.Sprintf("the pattern %s matches a file name starting with '-', which %s would read as an option", a.Text, name)
		}
	}
	if name == "git" {
		if risk := w.gitRepoRisk(args, sc); risk != "" {
			return false, risk
		}
	}
	if dynamicInput != "" && sensitive {
		return false, dynamicInput + ", which could include an option that writes or runs"
	}
	return true, ""
}

// isShell names the shells whose -c script is parsed as bash.
func isShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash":
		return true
	}
	return false
}

// allowedMatch reports whether argv matches an allowed pattern.
func (w *walker) allowedMatch(argv []shell.Word) bool {
	t := shell.Texts(argv)
	for _, p := range w.c.allowed {
		if p.Match(t) {
			return true
		}
	}
	return false
}

// checkForbidden denies argv if a forbidden pattern matches it, its base
// name form, or its git form without global options. A dynamic word
// matches any pattern word, since it could be anything.
func (w *walker) checkForbidden(argv []shell.Word, subject string) {
	if len(w.c.forbidden) == 0 {
		return
	}
	forms := [][]shell.Word{argv}
	if base := filepath.Base(argv[0].Text); base != argv[0].Text {
		b := slices.Clone(argv)
		b[0].Text = base
		forms = append(forms, b)
	}
	if filepath.Base(argv[0].Text) == "git" {
		forms = append(forms, gitWithoutGlobals(argv))
	}
	for _, p := range w.c.forbidden {
		for _, f := range forms {
			if matchConservative(p, f) {
				w.deny(RuleForbidden, subject, fmt.Sprintf("`%s` matches the forbidden pattern `%s` (permissions.forbidden_commands) and is never run", strings.Join(shell.Texts(argv), " "), p))
				return
			}
		}
	}
}

// matchConservative matches p against argv where dynamic words may be
// anything: they match every pattern word, and a dynamic word in the tail
// makes the tail match.
func matchConservative(p Pattern, argv []shell.Word) bool {
	if p.Match(shell.Texts(argv)) {
		return true
	}
	dyn := false
	for _, a := range argv {
		dyn = dyn || !a.Static || a.Glob
	}
	if !dyn {
		return false
	}
	n := len(p.words)
	for i := 0; i < n-1; i++ {
		if i >= len(argv) {
			return false
		}
		if argv[i].Static && !argv[i].Glob && !p.words[i].MatchString(argv[i].Text) {
			return false
		}
		if !argv[i].Static && !p.couldStartWith(i, argv[i].Prefix) {
			return false
		}
	}
	if len(argv) < n {
		return p.tail
	}
	if !p.tail && len(argv) > n {
		// A dynamic word may expand to several words or none.
		return slices.ContainsFunc(argv, func(a shell.Word) bool { return !a.Static })
	}
	for _, a := range argv[n-1:] {
		if !a.Static || a.Glob {
			return true
		}
	}
	return p.words[n-1].MatchString(strings.Join(shell.Texts(argv[n-1:]), " "))
}

// gitWithoutGlobals drops git's global options (git -C dir -c k=v push is
// git push) for forbidden matching.
func gitWithoutGlobals(argv []shell.Word) []shell.Word {
	out := []shell.Word{{Text: "git", Static: true}}
	i := 1
	for ; i < len(argv); i++ {
		t := argv[i].Text
		if !strings.HasPrefix(t, "-") {
			break
		}
		switch t {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix":
			i++
		}
	}
	return append(out, argv[min(i, len(argv)):]...)
}

// forbiddenSuffixes scans the arguments of a command that is not read-only
// for forbidden commands it may run: every suffix starting at a word that
// is not an option (find . -exec git push ;) and every word holding spaces,
// parsed as a script (watch 'git push', flock f -c 'git push').
func (w *walker) forbiddenSuffixes(argv []shell.Word, sc *scope) {
	if len(w.c.forbidden) == 0 || w.forbiddenOnly {
		return
	}
	sub := &walker{c: w.c, mode: w.mode, ro: w.ro, depth: w.depth + 1, forbiddenOnly: true}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !a.Static || strings.HasPrefix(a.Text, "-") {
			continue
		}
		sub.simple(argv[i:], strings.Join(shell.Texts(argv), " "), sc.clone())
		if strings.ContainsAny(a.Text, " \t\n;&|") {
			sub.script(a.Text, sc.clone(), a.Text)
		}
	}
	for _, f := range sub.v.Findings {
		w.v.Add(f)
	}
}

// forbiddenScript checks the static words of args, joined, as a script for
// forbidden commands (eval 'git push').
func (w *walker) forbiddenScript(args []shell.Word, sc *scope) {
	if len(args) == 0 {
		return
	}
	// The script runs when this command does; inside a suffix scan it
	// may not run at all, so sudo there stays data.
	sub := &walker{c: w.c, mode: w.mode, ro: w.ro, depth: w.depth + 1, forbiddenOnly: true, code: !w.forbiddenOnly || w.code}
	src := strings.Join(shell.Texts(args), " ")
	sub.script(src, sc.clone(), src)
	for _, f := range sub.v.Findings {
		w.v.Add(f)
	}
}

// optionWrapper is a wrapper that runs the command after its options (and
// after operands of its own, such as timeout's duration).
type optionWrapper struct {
	// valued are the options whose value is the next word; shortValued
	// says every two-character option takes one (stdbuf -o L).
	valued      []string
	shortValued bool
	// own is the number of the wrapper's own operands before the command.
	own int
}

// optionWrappers are the wrappers that need no more than option skipping.
var optionWrappers = map[string]optionWrapper{
	"timeout": {valued: []string{"-s", "-k", "--signal", "--kill-after"}, own: 1},
	"nice":    {valued: []string{"-n"}},
	"nohup":   {}, "builtin": {}, "setsid": {},
	"stdbuf": {shortValued: true},
	"exec":   {valued: []string{"-a"}},
}

// split divides args into the wrapper's own words and the command it runs.
func (ow optionWrapper) split(args []shell.Word) (inner, extra []shell.Word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Text, "-") {
		if slices.Contains(ow.valued, args[i].Text) || (ow.shortValued && len(args[i].Text) == 2) {
			i++
		}
		i++
	}
	if ow.own > 0 {
		if i >= len(args) {
			return nil, args
		}
		i += ow.own
	}
	i = min(i, len(args))
	return args[i:], args[:i]
}

// unwrap returns the command a wrapper runs. extra are the wrapper's own
// arguments (checked as paths); dynamic says why the inner command gets
// arguments at run time; ok is false when argv is not a wrapper.
func (w *walker) unwrap(argv []shell.Word, subject string, sc *scope) (inner, extra []shell.Word, dynamic string, ok bool) {
	name := argv[0].Text
	args := argv[1:]
	if ow, found := optionWrappers[name]; found {
		inner, extra = ow.split(args)
		return inner, extra, "", true
	}
	switch name {
	case "sudo", "doas", "su", "pkexec", "run0":
		if w.forbiddenOnly && !w.code {
			return nil, nil, "", true // an argument named sudo is not a privilege escalation
		}
		w.deny(RuleForbidden, subject, fmt.Sprintf("`%s` escalates privileges, which Odin never does", name))
		return nil, nil, "", true
	case "env":
		return w.unwrapEnv(args, subject)
	case "jobs":
		inner, extra, ok = unwrapJobs(args)
		return inner, extra, "", ok
	case "command":
		inner, extra = unwrapCommand(args)
		return inner, extra, "", true
	case "time":
		return w.unwrapTime(args, subject, sc), nil, "", true
	case "xargs":
		inner, extra = w.unwrapXargs(args, subject)
		return inner, extra, "xargs appends arguments read from its input", true
	}
	return nil, nil, "", false
}

// unwrapJobs: jobs -x CMD ARGS runs CMD with job specs replaced by process
// group IDs; any other jobs is not a wrapper.
func unwrapJobs(args []shell.Word) (inner, extra []shell.Word, ok bool) {
	i, run := 0, false
	for ; i < len(args) && args[i].Static && strings.HasPrefix(args[i].Text, "-") && args[i].Text != "-"; i++ {
		if args[i].Text == "--" {
			i++
			break
		}
		run = run || strings.ContainsRune(args[i].Text, 'x')
	}
	if !run {
		return nil, nil, false
	}
	return args[i:], args[:i], true
}

// unwrapCommand: command [-p] CMD runs CMD; command -v/-V NAME is a lookup
// that runs nothing.
func unwrapCommand(args []shell.Word) (inner, extra []shell.Word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Text, "-") {
		if strings.ContainsAny(args[i].Text, "vV") {
			return nil, nil
		}
		i++
	}
	return args[i:], args[:i]
}

// unwrapTime: time's -o FILE writes FILE, checked as a redirection.
func (w *walker) unwrapTime(args []shell.Word, subject string, sc *scope) (inner []shell.Word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Text, "-") {
		t := args[i].Text
		switch {
		case t == "-o" || t == "--output":
			if i+1 < len(args) {
				w.redirectTarget(args[i+1], true, subject, sc)
			}
			i++
		case strings.HasPrefix(t, "--output="):
			w.redirectTarget(shell.Word{Text: strings.TrimPrefix(t, "--output="), Static: args[i].Static}, true, subject, sc)
		case t == "-f" || t == "--format":
			i++
		}
		i++
	}
	return args[min(i, len(args)):]
}

// unwrapXargs: xargs runs its command (echo by default) with arguments
// read from its input.
func (w *walker) unwrapXargs(args []shell.Word, subject string) (inner, extra []shell.Word) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].Text, "-") {
		t := args[i].Text
		if t == "--" {
			i++
			break
		}
		switch t {
		case "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s":
			i++
		}
		if strings.HasPrefix(t, "--process-slot-var") {
			w.needsEdit(subject, "xargs --process-slot-var sets an environment variable", false)
		}
		i++
	}
	rest := args[min(i, len(args)):]
	if len(rest) == 0 {
		rest = []shell.Word{{Text: "echo", Static: true}}
	}
	return rest, args[:min(i, len(args))]
}

func (w *walker) unwrapEnv(args []shell.Word, subject string) (inner, extra []shell.Word, dynamic string, ok bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		t := a.Text
		switch {
		case !a.Static:
			w.unresolvable(subject, "an argument of env is only known at run time")
			return nil, nil, "", true
		case t == "--":
			i++
			goto done
		case t == "-S" || strings.HasPrefix(t, "--split-string") || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'S')):
			w.unresolvable(subject, "env -S splits a string into a command")
			w.forbiddenScript(args[i+1:], &scope{cwds: []string{w.c.guard.root}})
			return nil, nil, "", true
		case t == "-C" || strings.HasPrefix(t, "--chdir"):
			w.unresolvable(subject, "env -C runs the command in another directory")
			return nil, nil, "", true
		case t == "-u" || t == "--unset":
			// Unsetting a variable can remove a protection Odin puts in
			// the environment (GIT_CONFIG_COUNT keeps git from using a
			// planted bare repository).
			if i+1 < len(args) {
				w.unsetEnv(args[i+1].Text, subject)
			}
			i++
		case strings.HasPrefix(t, "--unset="):
			w.unsetEnv(strings.TrimPrefix(t, "--unset="), subject)
		case strings.HasPrefix(t, "-u") && !strings.HasPrefix(t, "--"):
			w.unsetEnv(strings.TrimPrefix(t, "-u"), subject)
		case t == "-i" || t == "-0" || t == "-" || t == "--ignore-environment" || t == "--null" || t == "-v" || t == "--debug":
		case strings.HasPrefix(t, "-"):
			w.needsEdit(subject, "env option "+t+" is not known to be harmless", false)
		case strings.Contains(t, "=") && !strings.HasPrefix(t, "="):
			w.variable(t[:strings.IndexByte(t, '=')], true, subject)
		default:
			goto done
		}
	}
done:
	if i >= len(args) {
		w.needsEdit(subject, "env without a command prints the environment, which may hold secrets", false)
		return nil, nil, "", true
	}
	return args[i:], nil, "", true
}

// shell handles bash/sh/... invocations: -c scripts are parsed and walked in
// a child shell; a script file or standard input cannot be checked. It
// returns the words to check as paths.
func (w *walker) shell(argv []shell.Word, subject string, sc *scope, allowed bool) []shell.Word {
	name := argv[0].Text
	args := argv[1:]
	hasC, stdin := false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		a := args[i]
		t := a.Text
		switch {
		case !a.Static:
			w.unresolvable(subject, "an option of "+name+" is only known at run time")
			return nil
		case t == "--" || t == "-":
			i++
			break loop
		case t == "-o" || t == "+o" || t == "-O" || t == "+O":
			i++
		case t == "--rcfile" || t == "--init-file":
			w.unresolvable(subject, name+" "+t+" runs a startup file")
			return nil
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if t[0] == '-' && strings.ContainsRune(t, 'c') {
				hasC = true
			}
			if strings.ContainsRune(t, 's') {
				stdin = true
			}
		default:
			break loop
		}
	}
	operands := args[min(i, len(args)):]
	switch {
	case hasC && len(operands) == 0:
		w.unresolvable(subject, name+" -c has no command string")
	case hasC && !operands[0].Static:
		w.unresolvable(subject, "the script given to "+name+" -c is only known at run time")
		return operands[1:]
	case hasC:
		w.script(operands[0].Text, sc.clone(), subject)
		return operands[1:]
	case stdin || len(operands) == 0:
		w.unresolvable(subject, name+" reads commands from its standard input, which cannot be checked")
	default:
		w.needsEdit(subject, name+" runs the script "+operands[0].Text, allowed)
		return operands
	}
	return nil
}

// cd checks a change of directory and records where the shell may now be.
func (w *walker) cd(args []shell.Word, subject string, sc *scope) {
	var target *shell.Word
	for i := range args {
		a := args[i]
		if a.Static && strings.HasPrefix(a.Text, "-") && a.Text != "-" {
			continue
		}
		target = &a
		break
	}
	switch {
	case target == nil:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` goes to the home directory, outside the project root %s", subject, w.c.guard.root))
		return
	case target.Text == "-" && target.Static:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` returns to a directory that cannot be known", subject))
		return
	case !target.Static || target.Glob:
		w.ask(RuleDynamic, subject, "cmd:"+subject, fmt.Sprintf("`%s`: the directory is only known at run time, so where later commands run cannot be checked", subject))
		return
	case target.Tilde:
		w.ask(RuleOutsideRoot, subject, "cmd:"+subject, fmt.Sprintf("`%s` goes to a home directory, outside the project root %s", subject, w.c.guard.root))
		return
	}
	var next []string
	for _, cwd := range sc.cwds {
		// bash's cd is logical: it removes dir/.. before following
		// symlinks (cd link/.. stays here), while the kernel follows link
		// first. The shell may end up in either.
		cands := []string{target.Text}
		if strings.Contains(target.Text, "..") {
			base := cwd
			if filepath.IsAbs(target.Text) {
				base = "/"
			}
			cands = append(cands, filepath.Join(base, target.Text)) // Join cleans lexically
		}
		for _, cand := range cands {
			resolved, err := resolveShell(cwd, cand)
			if w.processRelative(err, subject) {
				return
			}
			if err != nil {
				continue
			}
			if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
				continue // cd fails; the shell stays where it was
			}
			if w.c.guard.container(resolved) == "" {
				w.ask(RuleOutsideRoot, resolved, approve.PathKey(tool.AccessRead, resolved), fmt.Sprintf("`%s` leaves the project root %s for %s (rule %s); to allow it, run with --add-dir %s or add it to permissions.additional_dirs", subject, w.c.guard.root, resolved, RuleOutsideRoot, resolved))
			}
			next = append(next, resolved)
		}
	}
	for _, d := range next {
		sc.addCwd(d)
	}
}

// execArgs returns the commands find -exec/-execdir/-ok/-okdir and
// fd -x/-X/--exec/--exec-batch run for the files found, so that each is
// checked as a command of its own ({} stays a word inside the search).
func execArgs(name string, args []shell.Word) [][]shell.Word {
	var out [][]shell.Word
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		var start bool
		switch name {
		case "find":
			start = t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir"
		default: // fd
			start = t == "-x" || t == "-X" || t == "--exec" || t == "--exec-batch"
		}
		if !start {
			continue
		}
		j := i + 1
		for j < len(args) && args[j].Text != ";" && !(name == "find" && args[j].Text == "+") {
			j++
		}
		if j > i+1 {
			out = append(out, args[i+1:j])
		}
		i = j
	}
	return out
}

// unsetEnv checks env -u NAME: removing a variable Odin sets for the
// command (GIT_CONFIG_*, PAGER...) changes what the command does.
func (w *walker) unsetEnv(name, subject string) {
	if !safeEnvName(name) {
		w.needsEdit(subject, fmt.Sprintf("env -u %s removes %s from the command's environment, which can change what the command runs", name, name), false)
	}
}

// gitConfig checks configuration given on git's command line (-c KEY=VALUE,
// --config-env=KEY=ENV). Much of git's configuration names programs or
// commands: aliases (alias.p=push, alias.x=!cmd), core.pager, core.sshCommand,
// core.fsmonitor, diff.external, credential helpers, include.path... so a
// key outside a short list of harmless ones cannot be checked, even under
// an allowed pattern like 'git *'. Its value is still searched for
// forbidden commands and sudo.
func (w *walker) gitConfig(args []shell.Word, subject string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.Static || !strings.HasPrefix(a.Text, "-") {
			return
		}
		var kv string
		switch {
		case a.Text == "-c" || a.Text == "--config-env":
			if i+1 < len(args) {
				i++
				kv = args[i].Text
				if !args[i].Static {
					w.unresolvable(subject, "a git configuration given on the command line is only known at run time")
					continue
				}
			}
		case strings.HasPrefix(a.Text, "--config-env="):
			kv = strings.TrimPrefix(a.Text, "--config-env=")
		case strings.HasPrefix(a.Text, "-c") && len(a.Text) > 2:
			kv = a.Text[2:]
		case a.Text == "-C" || a.Text == "--namespace" || a.Text == "--git-dir" || a.Text == "--work-tree" || a.Text == "--super-prefix":
			i++
			continue
		default:
			continue
		}
		key, value, _ := strings.Cut(kv, "=")
		if harmlessGitKey(strings.ToLower(key)) {
			continue
		}
		w.unresolvable(subject, fmt.Sprintf("git -c %s sets configuration that can name programs or commands (aliases, pagers, helpers)", key))
		// Program-valued keys (and ! aliases) hold shell command lines.
		w.forbiddenScript([]shell.Word{{Text: strings.TrimPrefix(value, "!"), Static: true}}, &scope{cwds: []string{w.c.guard.root}})
		if strings.HasPrefix(strings.ToLower(key), "alias.") && !strings.HasPrefix(value, "!") {
			// alias.p=push: git p ... is git push ...
			rest := args[i+1:]
			for len(rest) > 0 && strings.HasPrefix(rest[0].Text, "-") {
				rest = rest[1:]
			}
			if len(rest) > 0 && rest[0].Text == strings.TrimPrefix(strings.ToLower(key), "alias.") {
				argv := []shell.Word{{Text: "git", Static: true}}
				for _, f := range strings.Fields(value) {
					argv = append(argv, shell.Word{Text: f, Static: true})
				}
				w.checkForbidden(append(argv, rest[1:]...), subject)
			}
		}
	}
}

// harmlessGitKey lists configuration keys that name no program.
func harmlessGitKey(key string) bool {
	switch key {
	case "user.name", "user.email", "core.quotepath", "core.autocrlf", "core.safecrlf", "core.abbrev",
		"init.defaultbranch", "commit.gpgsign", "tag.gpgsign", "diff.renames", "diff.algorithm",
		"merge.conflictstyle", "pull.rebase", "log.showsignature", "column.ui", "color.ui",
		"advice.detachedhead", "core.filemode", "safe.bareRepository":
		return true
	}
	return strings.HasPrefix(key, "color.") || strings.HasPrefix(key, "advice.") || strings.HasPrefix(key, "i18n.")
}
