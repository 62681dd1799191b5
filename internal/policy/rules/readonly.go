package rules

import (
	"fmt"
	"strings"
)

// readOnly reports whether running the bare command name with args changes
// nothing outside caches and runs no program chosen by its arguments. When it
// is not, why says what makes it so. sensitive reports that the verdict
// depends on the arguments (a writing or executing flag exists), so
// arguments only known at run time void it.
//
// The rules are the table readOnlyRules; anything not listed is not
// read-only. The classification is deliberately narrow: a command missing
// there asks (in edit mode) or is refused (in ask and plan modes), which
// is safe.
func ReadOnly(name string, args []string) (ok bool, why string, sensitive bool) {
	r := readOnlyIndex[name]
	if r == nil {
		return false, fmt.Sprintf("%s is not a known read-only command", name), false
	}
	if r.Check == nil {
		return true, "", false
	}
	ok, why = r.Check(name, args)
	return ok, why, true
}

// readOnlyRule classifies the commands it names, the way Codex writes its
// exec policy: each rule carries commands it must call read-only and
// commands it must not, and TestReadOnlyRules runs every one, so a missed
// form is a line here.
type readOnlyRule struct {
	// Names are the bare command names the rule is for.
	Names []string
	// Why says why the command is read-only (for the reader).
	Why string
	// Check decides from the arguments: ok, or why not. A nil Check means
	// no argument writes or runs anything.
	Check func(name string, args []string) (ok bool, why string)
	// Match are commands (split at spaces) the rule must call read-only;
	// NotMatch those it must not.
	Match, NotMatch []string
}

// readOnlyIndex maps a command name to its rule.
var readOnlyIndex = func() map[string]*readOnlyRule {
	m := map[string]*readOnlyRule{}
	for i := range readOnlyRules {
		for _, n := range readOnlyRules[i].Names {
			m[n] = &readOnlyRules[i]
		}
	}
	return m
}()

// legacy adapts the classifiers that also report sensitivity (always true
// for a conditional rule) to Check.
func legacy(f func(args []string) (bool, string, bool)) func(string, []string) (bool, string) {
	return func(_ string, args []string) (bool, string) {
		ok, why, _ := f(args)
		return ok, why
	}
}

// alwaysOK is the Check of a builtin that is read-only once the wrapper
// walk took apart what it runs (jobs -x), but whose arguments still count
// as options, so that an option only known at run time voids it.
func alwaysOK(string, []string) (bool, string) { return true, "" }

// Long options are matched by prefix (longIs), as getopt_long and git
// accept abbreviations. Bash builtins are explained in internal/policy/builtins.go.
var readOnlyRules = []readOnlyRule{
	{
		Names: []string{"ls", "cat", "head", "tail", "nl", "tac", "rev", "cut", "paste", "join", "tr", "fold", "fmt",
			"expand", "unexpand", "column", "od", "hexdump", "strings", "cmp", "diff", "comm", "cksum", "sum"},
		Why:   "read the files named (checked as paths) and print; no option writes or runs (diff -r follows symlinks: followsLinks)",
		Match: []string{"ls -la", "cat a b", "diff -u a b", "od -c a"},
	},
	{
		Names: []string{"basename", "dirname", "realpath", "readlink", "stat", "df", "which", "whereis", "seq", "sleep"},
		Why:   "print names, metadata or numbers",
		Match: []string{"stat -c %s a", "seq 1 3"},
	},
	{
		Names: []string{"whoami", "id", "groups", "uname", "nproc", "uptime", "free", "ps", "getconf", "locale", "arch", "tty"},
		Why:   "print facts about the system",
		Match: []string{"uname -a", "ps aux"},
	},
	{
		Names: []string{"grep", "egrep", "fgrep"},
		Why:   "read files and patterns (-f FILE is a path); -R follows symlinks (followsLinks)",
		Match: []string{"grep -rn x .", "grep -f pats a"},
	},
	{
		Names: []string{"jq"},
		Why:   "no function writes a file or runs a program; -f/--rawfile take paths",
		Match: []string{"jq .a a.json"},
	},
	{
		Names: []string{"expr"},
		Why:   "evaluates its arguments itself, not as shell arithmetic",
		Match: []string{"expr 1 + 2"},
	},
	{
		Names: []string{"pwd", "echo", "true", "false", ":", "type", "test", "[", "exit", "return", "break", "continue",
			"shift", "help", "times", "dirs", "popd", "unset"},
		Why:   "bash builtins that print, test or change nothing a later command depends on (internal/policy/builtins.go)",
		Match: []string{"echo hi", "test -f a", "unset x"},
	},
	{
		Names:    []string{"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"},
		Why:      "hash the files named",
		Check:    checksumReadOnly,
		Match:    []string{"sha256sum a"},
		NotMatch: []string{"sha256sum -c a", "md5sum --check a", "sha1sum --ch a"},
	},
	{
		Names:    []string{"wc", "du"},
		Why:      "count the files named",
		Check:    filesFromReadOnly,
		Match:    []string{"wc -l a", "du -sh ."},
		NotMatch: []string{"wc --files0-from=a", "du --files0-from a"},
	},
	{
		Names: []string{"jobs"},
		Why:   "lists jobs; jobs -x CMD is taken apart by the wrapper walk and CMD checked",
		Check: alwaysOK,
		Match: []string{"jobs -l"},
	},
	{
		Names:    []string{"wait"},
		Why:      "waits for children",
		Check:    flagAssigns("wait", "p"),
		Match:    []string{"wait", "wait -n"},
		NotMatch: []string{"wait -p pid"},
	},
	{
		Names:    []string{"printf"},
		Why:      "prints its arguments",
		Check:    flagAssigns("printf", "v"),
		Match:    []string{"printf %s x"},
		NotMatch: []string{"printf -v PATH %s x"},
	},
	{
		Names:    []string{"umask"},
		Why:      "prints the file creation mask",
		Check:    umaskReadOnly,
		Match:    []string{"umask", "umask -S"},
		NotMatch: []string{"umask 000"},
	},
	{
		Names:    []string{"set"},
		Why:      "sets error-handling options and positional parameters",
		Check:    legacy(setReadOnly),
		Match:    []string{"set -euo pipefail", "set -e -x", "set -- a b"},
		NotMatch: []string{"set -a", "set -o posix", "set"},
	},
	{
		Names: []string{"git"},
		Why:   "builtin subcommands that only read (gitReadOnly)",
		Check: legacy(gitReadOnly),
		Match: []string{"git status --short", "git --no-pager log -3", "git -P diff --stat", "git --exec-path",
			"git show HEAD:main.go", "git grep -n foo", "git branch", "git branch -vv --list feat*",
			"git branch --contains abc123", "git tag", "git tag -l v1.*", "git remote -v", "git remote get-url origin",
			"git config --get user.name", "git config -l", "git stash list", "git worktree list", "git reflog", "git notes show"},
		NotMatch: []string{"git -ccore.pager=x log", "git --config-env=core.pager=X log", "git --exec-path=/tmp status",
			"git -p log", "git --bare log", "git --work-tree=/ status", "git diff -o out", "git log --textconv -p",
			"git cat-file --filters HEAD:x", "git grep -Oless foo", "git grep --open-files-in-pager foo",
			"git branch newbranch", "git branch -m a b", "git branch --set-upstream-to=origin/x", "git tag v9", "git tag -d v1",
			"git remote add evil x", "git config user.name x", "git config --get --unset x", "git config --get x --ed",
			"git stash", "git stash pop", "git worktree add x", "git reflog expire --all", "git notes add -m x",
			"git commit -m x", "git checkout main", "git help log", "git --weird log"},
	},
	{
		Names: []string{"go"},
		Why:   "go version/doc/help/list/vet, go env without -w/-u, go mod graph/why/verify",
		Check: legacy(goReadOnly),
		Match: []string{"go version", "go env GOPATH", "go list -m all", "go vet ./...", "go mod graph", "go -C sub list"},
		NotMatch: []string{"go env -w GOPROXY=x", "go vet -toolexec=./x ./...", "go list -exec ./x", "go mod tidy",
			"go build ./..."},
	},
	{
		Names:    []string{"gofmt"},
		Why:      "prints formatted source or the names of unformatted files",
		Check:    gofmtReadOnly,
		Match:    []string{"gofmt -l ."},
		NotMatch: []string{"gofmt -w .", "gofmt -cpuprofile=p ."},
	},
	{
		Names:    []string{"find"},
		Why:      "lists files; -L follows symlinks (followsLinks)",
		Check:    findReadOnly,
		Match:    []string{"find . -type f -name *.go"},
		NotMatch: []string{"find . -execdir ls ;", "find . -okdir ls ;", "find . -fls out", "find . -delete"},
	},
	{
		Names:    []string{"fd", "fdfind"},
		Why:      "lists files",
		Check:    fdReadOnly,
		Match:    []string{"fd -e go"},
		NotMatch: []string{"fd -x rm", "fd --exec=rm", "fdfind -X ls"},
	},
	{
		Names:    []string{"rg"},
		Why:      "searches files",
		Check:    rgReadOnly,
		Match:    []string{"rg -n foo"},
		NotMatch: []string{"rg --hostname-bin=./x foo", "rg --pre ./x foo", "rg --pre-glob=*.x foo"},
	},
	{
		Names: []string{"sed"},
		Why:   "prints edited text; the script is checked (sedScriptReadOnly)",
		Check: legacy(sedReadOnly),
		Match: []string{"sed -n 1p a", "sed --expression=p a"},
		NotMatch: []string{"sed -i.bak s/a/b/ a", "sed --in-place s/a/b/ a", "sed --i s/a/b/ a", "sed -f script a",
			"sed -nf script a", "sed --expression=w a"},
	},
	{
		Names: []string{"awk", "gawk", "mawk", "nawk"},
		Why:   "programs on the command line without output redirection, pipes, system, getline or extensions",
		Check: awkReadOnly,
		Match: []string{"awk {print$1} a", "awk -F: {print$1} /etc/passwd", "awk -v n=3 NR<=n a", "gawk NR==1"},
		NotMatch: []string{"awk {print>\"out\"} a", "awk {print|\"sh\"} a", "awk BEGIN{system(\"id\")}",
			"awk BEGIN{while((\"id\"|getline)>0)print}", "gawk @load\"filefuncs\"", "awk -f prog.awk a",
			"gawk -i inplace {print} a", "awk $1>5 a", "awk", "awk BEGIN{ARGV[1]=\"x\"}"},
	},
	{
		Names: []string{"sort"},
		Why:   "prints sorted lines",
		Check: sortReadOnly,
		Match: []string{"sort -u a"},
		NotMatch: []string{"sort -uo out a", "sort --output=out a", "sort --out=out a", "sort --compress-program=./x a",
			"sort --files0-from=a", "sort -T /tmp a"},
	},
	{
		Names:    []string{"uniq"},
		Why:      "prints unique lines",
		Check:    operandsReadOnly("uniq", []string{"-f", "-s", "-w"}),
		Match:    []string{"uniq -c a", "uniq -f 2 a"},
		NotMatch: []string{"uniq a out"},
	},
	{
		Names:    []string{"xxd"},
		Why:      "prints a hex dump",
		Check:    operandsReadOnly("xxd", []string{"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-groupsize", "-len", "-seek", "-name", "-offset"}),
		Match:    []string{"xxd a", "xxd -l 16 a"},
		NotMatch: []string{"xxd a out"},
	},
	{
		Names:    []string{"tree"},
		Why:      "prints a directory tree",
		Check:    treeReadOnly,
		Match:    []string{"tree -L 2"},
		NotMatch: []string{"tree -o out", "tree --output=out"},
	},
	{
		Names:    []string{"date"},
		Why:      "prints the date",
		Check:    legacy(dateReadOnly),
		Match:    []string{"date +%s", "date -d yesterday +%F"},
		NotMatch: []string{"date -s now", "date 010100002030", "date --s=now"},
	},
	{
		Names:    []string{"file"},
		Why:      "prints file types",
		Check:    fileReadOnly,
		Match:    []string{"file a"},
		NotMatch: []string{"file -C -m magic", "file -f list"},
	},
	{
		Names:    []string{"hostname"},
		Why:      "prints the host name",
		Check:    hostnameReadOnly,
		Match:    []string{"hostname", "hostname -f"},
		NotMatch: []string{"hostname evil", "hostname -F file"},
	},
}

// Not read-only, whatever the arguments: every command no rule names.
var notReadOnlyExamples = []string{"tee out", "env", "printenv", "less a", "python3 -c print(1)", "touch x", "make"}

func checksumReadOnly(name string, args []string) (bool, string) {
	if shortFlag(args, "c") || args0(args, "--check") != "" {
		return false, name + " -c opens the files listed in a checksum file, so they cannot be checked"
	}
	return true, ""
}

func filesFromReadOnly(name string, args []string) (bool, string) {
	for _, a := range args {
		if longIs(a, "files0-from") != "" {
			return false, name + " --files0-from reads the names of the files to open from a file, so they cannot be checked"
		}
	}
	return true, ""
}

// flagAssigns refuses the option letter with which the builtin name
// assigns a shell variable (printf -v, wait -p).
func flagAssigns(name, letter string) func(string, []string) (bool, string) {
	return func(_ string, args []string) (bool, string) {
		if shortFlag(args, letter) {
			return false, name + " -" + letter + " assigns a shell variable"
		}
		return true, ""
	}
}

func umaskReadOnly(_ string, args []string) (bool, string) {
	if positional(args, nil) > 0 {
		return false, "umask with an argument changes the file creation mask"
	}
	return true, ""
}

func gofmtReadOnly(_ string, args []string) (bool, string) {
	for _, a := range args {
		if flagName(a) == "w" || flagName(a) == "cpuprofile" {
			return false, "gofmt -" + flagName(a) + " writes files"
		}
	}
	return true, ""
}

func findReadOnly(_ string, args []string) (bool, string) {
	for _, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			return false, "find " + a + " runs a command"
		case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return false, "find " + a + " changes files"
		}
	}
	return true, ""
}

func fdReadOnly(name string, args []string) (bool, string) {
	for _, a := range args {
		if a == "--exec" || a == "--exec-batch" || strings.HasPrefix(a, "--exec=") || strings.HasPrefix(a, "--exec-batch=") {
			return false, name + " " + a + " runs a command"
		}
	}
	if shortFlag(args, "xX") {
		return false, name + " -x/-X runs a command"
	}
	return true, ""
}

func rgReadOnly(_ string, args []string) (bool, string) {
	for _, a := range args {
		switch flagName(a) {
		case "pre", "pre-glob":
			return false, "rg --" + flagName(a) + " runs a preprocessor command on every file"
		case "hostname-bin":
			return false, "rg --hostname-bin runs a command"
		}
	}
	return true, ""
}

func sortReadOnly(_ string, args []string) (bool, string) {
	for _, a := range args {
		if n := longIs(a, "output", "compress-program", "temporary-directory"); n != "" {
			return false, "sort --" + n + " writes a file or runs a program"
		}
		if longIs(a, "files0-from") != "" {
			return false, "sort --files0-from reads the names of the files to open from a file, so they cannot be checked"
		}
	}
	if shortFlag(args, "oT") {
		return false, "sort -o/-T writes files"
	}
	return true, ""
}

// operandsReadOnly refuses a second file operand, which name writes
// (uniq, xxd); valued are the options that take the next word.
func operandsReadOnly(name string, valued []string) func(string, []string) (bool, string) {
	return func(_ string, args []string) (bool, string) {
		if positional(args, valued) > 1 {
			return false, name + " with two file operands writes the second"
		}
		return true, ""
	}
}

func treeReadOnly(_ string, args []string) (bool, string) {
	if shortFlag(args, "oR") || hasLong(args, "output") {
		return false, "tree -o writes a file"
	}
	return true, ""
}

func fileReadOnly(_ string, args []string) (bool, string) {
	if shortFlag(args, "C") || hasLong(args, "compile") {
		return false, "file -C writes a compiled magic file"
	}
	if shortFlag(args, "f") || hasLong(args, "files-from") {
		return false, "file -f reads the names of the files to open from a file, so they cannot be checked"
	}
	return true, ""
}

func hostnameReadOnly(_ string, args []string) (bool, string) {
	if positional(args, nil) > 0 || shortFlag(args, "Fb") || hasLong(args, "file") || hasLong(args, "boot") {
		return false, "hostname with a name sets the host name"
	}
	return true, ""
}

func awkReadOnly(name string, args []string) (bool, string) {
	ok, why, _ := awkProgramReadOnly(name, args)
	return ok, why
}

// flagName returns the name of an option word without dashes and value
// ("--pre=x" is "pre", "-w" is "w"), or "" for a non-option.
func flagName(a string) string {
	if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
		return ""
	}
	n := strings.TrimLeft(a, "-")
	if i := strings.IndexByte(n, '='); i >= 0 {
		n = n[:i]
	}
	return n
}

// hasLong reports a --name or --name=value option among args.
func hasLong(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--"+name || strings.HasPrefix(a, "--"+name+"=") {
			return true
		}
	}
	return false
}

// shortFlag reports whether any single-dash option cluster before "--"
// contains one of letters. It over-approximates (a letter inside an
// attached value counts), which errs on the safe side.
func shortFlag(args []string, letters string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], letters) {
			return true
		}
	}
	return false
}

// positional counts the operands among args, skipping the values of the
// options in valued (given as separate words).
func positional(args []string, valued []string) int {
	n := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return n + len(args) - i - 1
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			for _, v := range valued {
				if a == v {
					i++
					break
				}
			}
			continue
		}
		n++
	}
	return n
}

func setReadOnly(args []string) (bool, string, bool) {
	if len(args) == 0 {
		return false, "set without arguments prints every shell variable, which may hold secrets", true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			return true, "", true // the rest are positional parameters
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') {
			letters := a[1:]
			if strings.HasSuffix(letters, "o") {
				// -o (alone or ending a cluster like -euo) names an option.
				letters = strings.TrimSuffix(letters, "o")
				if i+1 >= len(args) {
					return false, "set -o without an option name prints the shell options", true
				}
				i++
				switch args[i] {
				case "errexit", "nounset", "pipefail", "xtrace", "verbose", "errtrace", "functrace", "noclobber", "noglob":
				default:
					return false, "set -o " + args[i] + " changes how later commands run", true
				}
			}
			if strings.Trim(letters, "euxvETCfhB") != "" {
				return false, "set " + a + " changes how later commands run", true
			}
			continue
		}
		return true, "", true
	}
	return true, "", true
}

func dateReadOnly(args []string) (bool, string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-d" || a == "-f" || a == "-r" || a == "--date" || a == "--file" || a == "--reference":
			i++
		case longIs(a, "set") != "" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 's')):
			return false, "date -s sets the clock", true
		case strings.HasPrefix(a, "-"):
		case strings.HasPrefix(a, "+"):
		default:
			return false, "date with an operand sets the clock", true
		}
	}
	return true, "", true
}

func sedReadOnly(args []string) (bool, string, bool) {
	scripts, why := sedScripts(args)
	if why != "" {
		return false, why, true
	}
	for _, s := range scripts {
		if ok, why := sedScriptReadOnly(s); !ok {
			return false, why, true
		}
	}
	return true, "", true
}

// sedScripts finds the scripts of a sed command line: those of -e and
// --expression, else the first operand. A script sed reads from a file
// (-f) or an in-place edit (-i) is refused with why.
func sedScripts(args []string) (scripts []string, why string) {
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		short := len(a) > 1 && a[0] == '-' && a[1] != '-'
		beforeE := strings.SplitN(a, "e", 2)[0]
		switch {
		case a == "--":
			if !explicit && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			return scripts, ""
		case a == "-i" || longIs(a, "in-place") != "" || (short && strings.ContainsAny(beforeE, "iI")):
			return nil, "sed -i edits files in place"
		case a == "-f" || longIs(a, "file") != "":
			return nil, "sed -f runs a script file that cannot be checked"
		case a == "-e" || (longIs(a, "expression") != "" && !strings.Contains(a, "=")):
			explicit = true
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
		case longIs(a, "expression") != "":
			explicit = true
			_, v, _ := strings.Cut(a, "=")
			scripts = append(scripts, v)
		case a == "-l" || (longIs(a, "line-length") != "" && !strings.Contains(a, "=")):
			i++
		case short:
			var took bool
			scripts, took = sedCluster(a, args[i+1:], scripts)
			if took {
				i++
			}
			explicit = explicit || strings.IndexByte(a, 'e') > 0
			if strings.ContainsRune(beforeE, 'f') {
				return nil, "sed -f runs a script file that cannot be checked"
			}
		case strings.HasPrefix(a, "-"):
		case !explicit:
			scripts = append(scripts, a)
			explicit = true
		}
	}
	return scripts, ""
}

// sedCluster reads the script of a short option cluster such as -ne 'p'
// (the script follows e, in the cluster or as the next argument); took
// says it used the next argument.
func sedCluster(a string, next, scripts []string) (_ []string, took bool) {
	j := strings.IndexByte(a, 'e')
	if j <= 0 {
		return scripts, false
	}
	if rest := a[j+1:]; rest != "" {
		return append(scripts, rest), false
	}
	if len(next) > 0 {
		return append(scripts, next[0]), true
	}
	return scripts, false
}

// awkProgramReadOnly accepts an awk program given on the command line that cannot
// write files or run commands. It is conservative: any '>' or '|' (output
// redirection, pipes, but also comparisons and ||), system, getline, and
// gawk's @load/@include, program files and extensions make it not
// read-only.
func awkProgramReadOnly(name string, args []string) (bool, string, bool) {
	program := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				program = args[i+1]
			}
			i = len(args)
		case a == "-F" || a == "-v" || a == "--field-separator" || a == "--assign":
			i++
		case strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "-v") || strings.HasPrefix(a, "--field-separator=") || strings.HasPrefix(a, "--assign="):
		case strings.HasPrefix(a, "-"):
			return false, name + " option " + a + " is not known to be harmless (program files, extensions, includes)", true
		default:
			program = a
			i = len(args)
		}
	}
	if program == "" {
		return false, name + " without a program on the command line runs a program that cannot be checked", true
	}
	// ARGV: a program that sets ARGV[i] reads files no argument names.
	for _, bad := range []string{">", "|", "system", "getline", "@", "close", "fflush", "ARGV"} {
		if strings.Contains(program, bad) {
			return false, fmt.Sprintf("the %s program contains %q, which can write files or run commands", name, bad), true
		}
	}
	return true, "", true
}

func goReadOnly(args []string) (bool, string, bool) {
	i := 0
	if i+1 < len(args) && args[i] == "-C" {
		i += 2
	}
	if i >= len(args) {
		return true, "", true
	}
	sub, rest := args[i], args[i+1:]
	for _, a := range rest {
		switch flagName(a) {
		case "toolexec", "exec", "vettool", "compiler", "ldflags", "gcflags", "asmflags", "gccgoflags":
			return false, "go " + sub + " -" + flagName(a) + " can run other programs", true
		}
	}
	switch sub {
	case "version", "doc", "help", "list", "vet":
		return true, "", true
	case "env":
		for _, a := range rest {
			if n := flagName(a); n == "w" || n == "u" {
				return false, "go env -" + n + " writes the Go configuration", true
			}
		}
		return true, "", true
	case "mod":
		if len(rest) > 0 && (rest[0] == "graph" || rest[0] == "why" || rest[0] == "verify") {
			return true, "", true
		}
		return false, "go mod " + strings.Join(rest, " ") + " changes go.mod, go.sum or the module cache", true
	}
	return false, "go " + sub + " builds or runs code", true
}

// longIs reports which of names the long option a (--name or --name=value)
// stands for, or "". GNU getopt_long and git's option parser accept any
// unambiguous prefix (sed --i is sed --in-place), so a prefix of a name
// counts as that name; an ambiguous prefix is an error, which counting it
// over-approximates safely.
func longIs(a string, names ...string) string {
	n, ok := strings.CutPrefix(a, "--")
	if !ok || n == "" {
		return ""
	}
	n, _, _ = strings.Cut(n, "=")
	if n == "" {
		return ""
	}
	for _, name := range names {
		if strings.HasPrefix(name, n) {
			return name
		}
	}
	return ""
}

// args0 returns the first of args that is a long option abbreviating
// long (a prefix of it), or "".
func args0(args []string, long string) string {
	for _, a := range args {
		if a == "--" {
			return ""
		}
		if longIs(a, strings.TrimPrefix(long, "--")) != "" {
			return a
		}
	}
	return ""
}

// followsLinks reports a read-only command that descends into directories
// and follows the symlinks it meets there, so it may read outside the
// directories its arguments name: grep -R, rg -L, fd -L, find -L, diff -r
// (which follows them unless --no-dereference).
func FollowsLinks(name string, args []string) bool {
	switch name {
	case "grep", "egrep", "fgrep":
		return shortFlag(args, "R") || args0(args, "--dereference-recursive") != ""
	case "rg", "fd", "fdfind":
		return shortFlag(args, "L") || hasLong(args, "follow")
	case "find":
		for _, a := range args {
			if a == "-L" || a == "-follow" {
				return true
			}
		}
	case "diff":
		return (shortFlag(args, "r") || args0(args, "--recursive") != "") && args0(args, "--no-dereference") == ""
	}
	return false
}
