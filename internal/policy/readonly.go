package policy

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
// The lists follow the tools' manuals; anything not listed is not read-only.
// The classification is deliberately narrow: a command missing here asks (in
// edit mode) or is refused (in ask and plan modes), which is safe.
//
// Why the unconditional ones are read-only (bash builtins: builtins.go):
//
//	ls cat head tail nl tac rev cut paste join tr fold fmt expand unexpand
//	column od hexdump strings cmp diff comm cksum sum
//	    read the files named (checked as paths) and print; no option writes
//	    or runs (diff -r follows symlinks: followsLinks)
//	basename dirname realpath readlink stat df which whereis seq sleep
//	    print names, metadata or numbers
//	whoami id groups uname nproc uptime free ps getconf locale arch tty
//	    print facts about the system
//	grep egrep fgrep
//	    read files and patterns (-f FILE is a path); -R follows symlinks
//	    (followsLinks)
//	jq  no function writes a file or runs a program; -f/--rawfile take paths
//	expr
//	    evaluates its arguments itself, not as shell arithmetic
//
// Conditional ones are below, each with the options that write, run or
// open files not named on the command line. Long options are matched by
// prefix (longIs), as getopt_long and git accept abbreviations.
func readOnly(name string, args []string) (ok bool, why string, sensitive bool) {
	switch name {
	case "ls", "cat", "head", "tail", "pwd", "echo", "true", "false", ":",
		"nl", "tac", "rev", "cmp", "diff", "comm", "cut", "paste", "join", "tr",
		"fold", "fmt", "expand", "unexpand", "column", "seq", "od", "hexdump",
		"strings", "cksum", "sum", "basename", "dirname", "realpath",
		"readlink", "stat", "df", "which", "whereis", "type", "whoami", "id",
		"groups", "uname", "nproc", "uptime", "free", "ps", "sleep", "test", "[",
		"grep", "egrep", "fgrep", "jq", "exit", "return", "break",
		"continue", "shift", "getconf", "locale", "arch", "tty", "expr", "help",
		"times", "dirs", "popd", "unset":
		return true, "", false
	case "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum":
		if shortFlag(args, "c") || args0(args, "--check") != "" {
			return false, name + " -c opens the files listed in a checksum file, so they cannot be checked", true
		}
		return true, "", true
	case "wc", "du":
		for _, a := range args {
			if longIs(a, "files0-from") != "" {
				return false, name + " --files0-from reads the names of the files to open from a file, so they cannot be checked", true
			}
		}
		return true, "", true
	case "jobs":
		// jobs -x runs a command; unwrap takes that form apart, so what is
		// left only lists, unless an option is only known at run time.
		return true, "", true
	case "wait":
		if shortFlag(args, "p") {
			return false, "wait -p assigns a shell variable", true
		}
		return true, "", true
	case "printf":
		if shortFlag(args, "v") {
			return false, "printf -v assigns a shell variable", true
		}
		return true, "", true
	case "umask":
		if positional(args, nil) > 0 {
			return false, "umask with an argument changes the file creation mask", true
		}
		return true, "", true
	case "set":
		return setReadOnly(args)
	case "git":
		return gitReadOnly(args)
	case "go":
		return goReadOnly(args)
	case "gofmt":
		for _, a := range args {
			if flagName(a) == "w" || flagName(a) == "cpuprofile" {
				return false, "gofmt -" + flagName(a) + " writes files", true
			}
		}
		return true, "", true
	case "find":
		for _, a := range args {
			switch a {
			case "-exec", "-execdir", "-ok", "-okdir":
				return false, "find " + a + " runs a command", true
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false, "find " + a + " changes files", true
			}
		}
		return true, "", true
	case "fd", "fdfind":
		for _, a := range args {
			if a == "--exec" || a == "--exec-batch" || strings.HasPrefix(a, "--exec=") || strings.HasPrefix(a, "--exec-batch=") {
				return false, name + " " + a + " runs a command", true
			}
		}
		if shortFlag(args, "xX") {
			return false, name + " -x/-X runs a command", true
		}
		return true, "", true
	case "rg":
		for _, a := range args {
			switch flagName(a) {
			case "pre", "pre-glob":
				return false, "rg --" + flagName(a) + " runs a preprocessor command on every file", true
			case "hostname-bin":
				return false, "rg --hostname-bin runs a command", true
			}
		}
		return true, "", true
	case "sed":
		return sedReadOnly(args)
	case "awk", "gawk", "mawk", "nawk":
		return awkReadOnly(name, args)
	case "sort":
		for _, a := range args {
			if n := longIs(a, "output", "compress-program", "temporary-directory"); n != "" {
				return false, "sort --" + n + " writes a file or runs a program", true
			}
			if longIs(a, "files0-from") != "" {
				return false, "sort --files0-from reads the names of the files to open from a file, so they cannot be checked", true
			}
		}
		if shortFlag(args, "oT") {
			return false, "sort -o/-T writes files", true
		}
		return true, "", true
	case "uniq":
		if positional(args, []string{"-f", "-s", "-w"}) > 1 {
			return false, "uniq with two file operands writes the second", true
		}
		return true, "", true
	case "xxd":
		if positional(args, []string{"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-groupsize", "-len", "-seek", "-name", "-offset"}) > 1 {
			return false, "xxd with two file operands writes the second", true
		}
		return true, "", true
	case "tree":
		if shortFlag(args, "oR") || hasLong(args, "output") {
			return false, "tree -o writes a file", true
		}
		return true, "", true
	case "date":
		return dateReadOnly(args)
	case "file":
		if shortFlag(args, "C") || hasLong(args, "compile") {
			return false, "file -C writes a compiled magic file", true
		}
		if shortFlag(args, "f") || hasLong(args, "files-from") {
			return false, "file -f reads the names of the files to open from a file, so they cannot be checked", true
		}
		return true, "", true
	case "hostname":
		if positional(args, nil) > 0 || shortFlag(args, "Fb") || hasLong(args, "file") || hasLong(args, "boot") {
			return false, "hostname with a name sets the host name", true
		}
		return true, "", true
	}
	return false, fmt.Sprintf("%s is not a known read-only command", name), false
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
		if (a[0] == '-' || a[0] == '+') && len(a) > 1 {
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
	var scripts []string
	explicit := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if !explicit && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
			}
			i = len(args)
		case a == "-i" || longIs(a, "in-place") != "" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(strings.SplitN(a, "e", 2)[0], "iI")):
			return false, "sed -i edits files in place", true
		case a == "-f" || longIs(a, "file") != "":
			return false, "sed -f runs a script file that cannot be checked", true
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
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			// A cluster such as -ne 'p': the script follows e.
			if j := strings.IndexByte(a, 'e'); j > 0 {
				explicit = true
				if rest := a[j+1:]; rest != "" {
					scripts = append(scripts, rest)
				} else if i+1 < len(args) {
					scripts = append(scripts, args[i+1])
					i++
				}
			}
			if strings.ContainsRune(strings.SplitN(a, "e", 2)[0], 'f') {
				return false, "sed -f runs a script file that cannot be checked", true
			}
		case strings.HasPrefix(a, "-"):
		default:
			if !explicit {
				scripts = append(scripts, a)
				explicit = true
			}
		}
	}
	for _, s := range scripts {
		if ok, why := sedScriptReadOnly(s); !ok {
			return false, why, true
		}
	}
	return true, "", true
}

// awkReadOnly accepts an awk program given on the command line that cannot
// write files or run commands. It is conservative: any '>' or '|' (output
// redirection, pipes, but also comparisons and ||), system, getline, and
// gawk's @load/@include, program files and extensions make it not
// read-only.
func awkReadOnly(name string, args []string) (bool, string, bool) {
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

// gitReadOnly classifies git invocations. Only builtin subcommands are
// listed, because git prefers a builtin over an alias of the same name,
// while an unknown name could be an alias defined by the repository.
func gitReadOnly(args []string) (bool, string, bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || (strings.HasPrefix(a, "-c") && len(a) > 2) || a == "--config-env" || strings.HasPrefix(a, "--config-env="):
			return false, "git -c sets configuration, which can run programs (core.pager, core.fsmonitor, diff.external...)", true
		case a == "--git-dir" || strings.HasPrefix(a, "--git-dir=") || a == "--work-tree" || strings.HasPrefix(a, "--work-tree=") || a == "--bare":
			return false, "git " + a + " points git at another repository, whose configuration can run programs", true
		case strings.HasPrefix(a, "--exec-path="):
			return false, "git --exec-path= runs git commands from another directory", true
		case a == "-p" || a == "--paginate":
			return false, "git -p runs a pager", true
		case a == "-C" || a == "--namespace" || a == "--super-prefix":
			i++
		case strings.HasPrefix(a, "--namespace=") || strings.HasPrefix(a, "--super-prefix=") || strings.HasPrefix(a, "--list-cmds="):
		case a == "-P" || a == "--no-pager" || a == "--no-replace-objects" || a == "--literal-pathspecs" ||
			a == "--glob-pathspecs" || a == "--noglob-pathspecs" || a == "--icase-pathspecs" ||
			a == "--no-optional-locks" || a == "--no-advice" || a == "--exec-path" || a == "--html-path" ||
			a == "--man-path" || a == "--info-path" || a == "--version" || a == "-v":
		case strings.HasPrefix(a, "-"):
			return false, "git option " + a + " is not known to be harmless", true
		default:
			return gitSubReadOnly(a, args[i+1:])
		}
	}
	return true, "", true
}

func gitSubReadOnly(sub string, rest []string) (bool, string, bool) {
	for _, a := range rest {
		switch n := flagName(a); {
		case n == "output" && strings.HasPrefix(a, "--"), a == "-o":
			return false, "git " + sub + " " + a + " writes a file", true
		case n == "ext-diff" && strings.HasPrefix(a, "--"):
			return false, "git " + sub + " --ext-diff runs an external diff program", true
		case (n == "textconv" || n == "filters") && strings.HasPrefix(a, "--"),
			sub == "cat-file" && longIs(a, "textconv", "filters") != "":
			return false, "git " + sub + " " + a + " runs conversion programs", true
		case n == "open-files-in-pager" && strings.HasPrefix(a, "--"), sub == "grep" && (strings.HasPrefix(a, "-O") || longIs(a, "open-files-in-pager") != ""):
			return false, "git grep -O opens a pager", true
		}
	}
	switch sub {
	case "status", "diff", "log", "show", "shortlog", "whatchanged", "diff-tree", "diff-files",
		"diff-index", "range-diff", "rev-parse", "ls-files", "ls-tree", "blame", "annotate",
		"describe", "merge-base", "rev-list", "name-rev", "show-ref", "for-each-ref",
		"count-objects", "check-ignore", "check-attr", "version", "cat-file", "show-branch",
		"cherry", "grep":
		return true, "", true
	case "branch":
		return listOnly("branch", rest, "-a -r -v -vv -i --all --remotes --verbose --ignore-case --show-current --no-color --no-column --no-abbrev",
			"--contains --no-contains --merged --no-merged --points-at --sort --format --color --column --abbrev")
	case "tag":
		return listOnly("tag", rest, "-i --ignore-case --no-color --no-column",
			"--contains --no-contains --merged --no-merged --points-at --sort --format --color --column")
	case "remote":
		if len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) || rest[0] == "get-url" {
			return true, "", true
		}
	case "config":
		for _, a := range rest {
			switch a {
			case "--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list":
				for _, b := range rest {
					// git's option parser accepts unambiguous
					// abbreviations: --ed is --edit.
					switch {
					case b == "-e" || b == "set" || b == "unset" || b == "edit" || b == "rename-section" || b == "remove-section",
						longIs(b, "add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit") != "":
						return false, "git config " + b + " changes configuration", true
					}
				}
				return true, "", true
			}
		}
		return false, "git config without --get or --list changes configuration", true
	case "stash":
		if len(rest) > 0 && (rest[0] == "list" || rest[0] == "show") {
			return true, "", true
		}
	case "worktree":
		if len(rest) > 0 && rest[0] == "list" {
			return true, "", true
		}
	case "notes":
		if len(rest) == 0 || rest[0] == "list" || rest[0] == "show" {
			return true, "", true
		}
	case "reflog":
		for _, a := range rest {
			if a == "expire" || a == "delete" {
				return false, "git reflog " + a + " changes the reflog", true
			}
		}
		return true, "", true
	}
	return false, strings.TrimSpace("git "+sub+" "+strings.Join(rest, " ")) + " is not a read-only git command", true
}

// listOnly accepts git branch/tag invocations that only list: flags from
// flags, valued options from valued (as --opt=v, --opt v or -n<num>), and
// positional patterns only with -l/--list.
func listOnly(sub string, rest []string, flags, valued string) (bool, string, bool) {
	isFlag := map[string]bool{}
	for _, f := range strings.Fields(flags) {
		isFlag[f] = true
	}
	isValued := map[string]bool{}
	for _, f := range strings.Fields(valued) {
		isValued[f] = true
	}
	list := false
	var operands []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-l" || a == "--list":
			list = true
		case isFlag[a]:
		case isValued[a]:
			if a != "--color" && a != "--column" && a != "--abbrev" {
				i++
			}
		case strings.HasPrefix(a, "--") && strings.Contains(a, "=") && isValued[a[:strings.IndexByte(a, '=')]]:
		case sub == "tag" && strings.HasPrefix(a, "-n"):
		case strings.HasPrefix(a, "-"):
			return false, "git " + sub + " " + a + " is not a listing option", true
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 && !list {
		return false, "git " + sub + " " + strings.Join(operands, " ") + " creates a " + sub, true
	}
	return true, "", true
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
func followsLinks(name string, args []string) bool {
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
