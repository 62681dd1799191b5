package rules

import (
	"slices"
	"strings"
)

// gitReadOnly classifies git invocations. Only builtin subcommands are
// listed, because git prefers a builtin over an alias of the same name,
// while an unknown name could be an alias defined by the repository.
func gitReadOnly(args []string) (bool, string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return gitSubReadOnly(a, args[i+1:])
		}
		skip, why := gitGlobalOption(a)
		if why != "" {
			return false, why, true
		}
		if skip {
			i++
		}
	}
	return true, "", true
}

// gitHarmlessGlobals are git's global options that change nothing and run
// nothing.
var gitHarmlessGlobals = strings.Fields(`-P --no-pager --no-replace-objects --literal-pathspecs --glob-pathspecs
	--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --exec-path --html-path --man-path
	--info-path --version -v`)

// gitGlobalOption judges one of git's global options: why it is refused,
// or whether it takes the next argument as its value.
func gitGlobalOption(a string) (skipValue bool, why string) {
	switch {
	case a == "-c" || (strings.HasPrefix(a, "-c") && len(a) > 2) || a == "--config-env" || strings.HasPrefix(a, "--config-env="):
		return false, "git -c sets configuration, which can run programs (core.pager, core.fsmonitor, diff.external...)"
	case a == "--git-dir" || strings.HasPrefix(a, "--git-dir=") || a == "--work-tree" || strings.HasPrefix(a, "--work-tree=") || a == "--bare":
		return false, "git " + a + " points git at another repository, whose configuration can run programs"
	case strings.HasPrefix(a, "--exec-path="):
		return false, "git --exec-path= runs git commands from another directory"
	case a == "-p" || a == "--paginate":
		return false, "git -p runs a pager"
	case a == "-C" || a == "--namespace" || a == "--super-prefix":
		return true, ""
	case strings.HasPrefix(a, "--namespace=") || strings.HasPrefix(a, "--super-prefix=") || strings.HasPrefix(a, "--list-cmds="),
		slices.Contains(gitHarmlessGlobals, a):
		return false, ""
	}
	return false, "git option " + a + " is not known to be harmless"
}

// gitReadOnlySubs are the builtin subcommands that only read, whatever
// their arguments (gitRunsProgram still applies).
var gitReadOnlySubs = strings.Fields(`status diff log show shortlog whatchanged diff-tree diff-files diff-index
	range-diff rev-parse ls-files ls-tree blame annotate describe merge-base rev-list name-rev show-ref
	for-each-ref count-objects check-ignore check-attr version cat-file show-branch cherry grep`)

// gitSubRules decide the subcommands that read only in some forms.
var gitSubRules = map[string]func(rest []string) (bool, string, bool){
	"branch": func(rest []string) (bool, string, bool) {
		return listOnly("branch", rest, "-a -r -v -vv -i --all --remotes --verbose --ignore-case --show-current --no-color --no-column --no-abbrev",
			"--contains --no-contains --merged --no-merged --points-at --sort --format --color --column --abbrev")
	},
	"tag": func(rest []string) (bool, string, bool) {
		return listOnly("tag", rest, "-i --ignore-case --no-color --no-column",
			"--contains --no-contains --merged --no-merged --points-at --sort --format --color --column")
	},
	"remote": firstIs(func(rest []string) bool {
		return len(rest) == 0 || (len(rest) == 1 && (rest[0] == "-v" || rest[0] == "--verbose")) || rest[0] == "get-url"
	}),
	"config":   gitConfigReadOnly,
	"stash":    firstIs(func(rest []string) bool { return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show") }),
	"worktree": firstIs(func(rest []string) bool { return len(rest) > 0 && rest[0] == "list" }),
	"notes":    firstIs(func(rest []string) bool { return len(rest) == 0 || rest[0] == "list" || rest[0] == "show" }),
	"reflog": func(rest []string) (bool, string, bool) {
		for _, a := range rest {
			if a == "expire" || a == "delete" {
				return false, "git reflog " + a + " changes the reflog", true
			}
		}
		return true, "", true
	},
}

// firstIs accepts the forms ok holds for; the caller words the refusal.
func firstIs(ok func(rest []string) bool) func(rest []string) (bool, string, bool) {
	return func(rest []string) (bool, string, bool) { return ok(rest), "", true }
}

func gitSubReadOnly(sub string, rest []string) (bool, string, bool) {
	if why := gitRunsProgram(sub, rest); why != "" {
		return false, why, true
	}
	if slices.Contains(gitReadOnlySubs, sub) {
		return true, "", true
	}
	if f := gitSubRules[sub]; f != nil {
		if ok, why, sensitive := f(rest); ok || why != "" {
			return ok, why, sensitive
		}
	}
	return false, strings.TrimSpace("git "+sub+" "+strings.Join(rest, " ")) + " is not a read-only git command", true
}

// gitRunsProgram says why an option of any subcommand writes a file or
// runs a program (an output file, an external diff, conversion filters, a
// pager).
func gitRunsProgram(sub string, rest []string) string {
	for _, a := range rest {
		long := strings.HasPrefix(a, "--")
		switch n := flagName(a); {
		case n == "output" && long, a == "-o":
			return "git " + sub + " " + a + " writes a file"
		case n == "ext-diff" && long:
			return "git " + sub + " --ext-diff runs an external diff program"
		case (n == "textconv" || n == "filters") && long,
			sub == "cat-file" && longIs(a, "textconv", "filters") != "":
			return "git " + sub + " " + a + " runs conversion programs"
		case n == "open-files-in-pager" && long, sub == "grep" && (strings.HasPrefix(a, "-O") || longIs(a, "open-files-in-pager") != ""):
			return "git grep -O opens a pager"
		}
	}
	return ""
}

// gitConfigReadOnly accepts git config that only reads (--get, --list,
// get, list) and nothing that writes alongside.
func gitConfigReadOnly(rest []string) (bool, string, bool) {
	reads := false
	for _, a := range rest {
		switch a {
		case "--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list":
			reads = true
		}
	}
	if !reads {
		return false, "git config without --get or --list changes configuration", true
	}
	for _, b := range rest {
		// git's option parser accepts unambiguous abbreviations:
		// --ed is --edit.
		switch {
		case b == "-e" || b == "set" || b == "unset" || b == "edit" || b == "rename-section" || b == "remove-section",
			longIs(b, "add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit") != "":
			return false, "git config " + b + " changes configuration", true
		}
	}
	return true, "", true
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
