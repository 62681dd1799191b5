package tools

import (
	"github.com/odin-code/odin/tools/tool"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// deniedRead returns the result refusing a path on the read deny list, or
// nil when none of paths (the argument as given, and resolved) is on it.
// The refusal names the rule, so the user can see what to lift; it asks
// the model not to work around it, since a command could not read the file
// either under bubblewrap.
func deniedRead(env *tool.Env, paths ...string) *tool.Result {
	if env == nil || env.DenyRead == nil {
		return nil
	}
	for _, p := range paths {
		if rule, ok := env.DenyRead.Check(p); ok {
			r := tool.Errorf("%s is on the read deny list (rule %s): its contents are kept from the model. Do not try to read it another way; if the task needs something from it, ask the user.", p, rule)
			r.Denied = true
			return &r
		}
	}
	return nil
}

// walkExclude is the search walk's filter for the read deny list; nil
// when the Env has none.
func walkExclude(env *tool.Env) func(string, fs.FileMode) bool {
	if env == nil || env.DenyRead == nil {
		return nil
	}
	return env.DenyRead.Hides
}

// hideDeniedDiffs replaces each file's section of a git diff whose file
// (a path relative to top, the repository's top level) is on the read deny
// list with a line saying so. A tracked .env would otherwise show its
// committed lines: the sandbox hides the file, so git sees it emptied.
func hideDeniedDiffs(env *tool.Env, top, diff string) string {
	if env == nil || env.DenyRead == nil || top == "" {
		return diff
	}
	var b strings.Builder
	hiding := false
	for _, line := range strings.SplitAfter(diff, "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			hiding = false
			for _, p := range diffPaths(strings.TrimRight(rest, "\n")) {
				if rule, ok := env.DenyRead.Check(filepath.Join(top, p)); ok {
					hiding = true
					b.WriteString("diff --git (" + p + " is on the read deny list, rule " + rule + ": its diff is not shown)\n")
					break
				}
			}
		}
		if !hiding {
			b.WriteString(line)
		}
	}
	return b.String()
}

// diffPaths returns the two paths of a "diff --git" header without their
// a/ and b/ prefixes; git quotes names with unusual characters.
func diffPaths(rest string) []string {
	var out []string
	for rest != "" {
		var tok string
		if rest[0] == '"' {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return out
			}
			tok, _ = strconv.Unquote(q)
			rest = strings.TrimPrefix(rest[len(q):], " ")
		} else if i := strings.Index(rest, " b/"); i >= 0 && strings.HasPrefix(rest, "a/") {
			tok, rest = rest[:i], rest[i+1:]
		} else {
			tok, rest = rest, ""
		}
		if len(tok) > 2 && (tok[:2] == "a/" || tok[:2] == "b/") {
			out = append(out, tok[2:])
		}
	}
	return out
}
