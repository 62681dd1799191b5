package policy

import (
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/pattern"
)

// Pattern is a command pattern of permissions.allowed_commands and
// permissions.forbidden_commands, matched word by word against a simple
// command's argv:
//
//   - The pattern is split into words at whitespace (a word cannot contain
//     a space). Each word is a shell glob: * matches any run of characters
//     (including /), ? one character, [...] a class, \ escapes.
//   - Word i of the pattern must match word i of the command, so
//     "go * -v" matches "go test -v" but not "go test ./x -v".
//   - If the last pattern word ends with an unescaped *, it matches the rest
//     of the command, words joined by single spaces: "go test *" matches
//     "go test", "go test ./..." and "go test -run X ./pkg"; "git push*"
//     matches "git push" and "git push origin main" (and "git pushx").
//   - Otherwise the command must have exactly as many words as the pattern.
//
// The command's words are its argv after quote removal, so "go test" and
// 'go' "test" are the same command. Allowed patterns are matched against the
// innermost command after wrappers (timeout, env, nice, bash -c...) are
// unwrapped; forbidden patterns against every layer, against the command
// name's base name (/usr/bin/git as git), against git with its global
// options removed (git -C dir push as git push), and against every suffix
// of a command that is not read-only (so "xargs git push" is caught).
type Pattern struct {
	text  string
	raw   []string
	words []*regexp.Regexp
	tail  bool // the last word ends with *: it spans the rest
}

// ParsePattern compiles a command pattern.
func ParsePattern(s string) (Pattern, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return Pattern{}, fmt.Errorf("policy: empty command pattern")
	}
	p := Pattern{text: strings.Join(fields, " "), raw: fields}
	last := fields[len(fields)-1]
	p.tail = strings.HasSuffix(last, "*") && !strings.HasSuffix(last, `\*`)
	for _, f := range fields {
		expr, err := pattern.Regexp(f, 0)
		if err != nil {
			return Pattern{}, fmt.Errorf("policy: command pattern %q: %w", s, err)
		}
		re, err := regexp.Compile("^(?s:" + expr + ")$")
		if err != nil {
			return Pattern{}, fmt.Errorf("policy: command pattern %q: %w", s, err)
		}
		p.words = append(p.words, re)
	}
	return p, nil
}

// String returns the pattern as written (whitespace normalised).
func (p Pattern) String() string { return p.text }

// Match reports whether argv matches the pattern.
func (p Pattern) Match(argv []string) bool {
	n := len(p.words)
	if len(argv) < n-1 || (!p.tail && len(argv) != n) {
		return false
	}
	for i := 0; i < n-1; i++ {
		if !p.words[i].MatchString(argv[i]) {
			return false
		}
	}
	if p.tail {
		rest := ""
		if len(argv) >= n {
			rest = strings.Join(argv[n-1:], " ")
		}
		return p.words[n-1].MatchString(rest)
	}
	return p.words[n-1].MatchString(argv[n-1])
}

// couldStartWith reports whether pattern word i could match a word that
// starts with prefix: their literal beginnings agree.
func (p Pattern) couldStartWith(i int, prefix string) bool {
	lit := p.raw[i]
	if j := strings.IndexAny(lit, `*?[\`); j >= 0 {
		lit = lit[:j]
	}
	n := min(len(lit), len(prefix))
	return lit[:n] == prefix[:n]
}

// compilePatterns compiles a config list, naming the key in errors.
func compilePatterns(key string, list []string) ([]Pattern, error) {
	var out []Pattern
	for _, s := range list {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		out = append(out, p)
	}
	return out, nil
}
