package readdeny

import (
	"errors"
	"fmt"
	"strings"
)

// FromClaude converts a Claude Code permission rule that denies reading —
// "Read(./.env)", "Read(~/.aws/**)", "Read(//etc/secret)" — into a
// deny_read pattern. Claude Code reads "//x" as the absolute path /x, "~/x"
// in the home directory, "/x" relative to the settings file (taken here as
// the project root, where project settings apply) and "./x" or "x" relative
// to the working directory, with gitignore globs in all of them. A rule for
// another tool is an error wrapping ErrNotRead.
func FromClaude(rule string) (string, error) {
	rule = strings.TrimSpace(rule)
	inner, ok := strings.CutPrefix(rule, "Read(")
	if !ok || !strings.HasSuffix(inner, ")") {
		if rule == "Read" {
			return "", fmt.Errorf("%q denies every read: it has no deny_read pattern", rule)
		}
		return "", fmt.Errorf("%q: %w", rule, ErrNotRead)
	}
	p := strings.TrimSpace(strings.TrimSuffix(inner, ")"))
	var out string
	switch {
	case p == "" || strings.Trim(p, "*/") == "":
		return "", fmt.Errorf("%q denies every read: it has no deny_read pattern", rule)
	case strings.HasPrefix(p, "//"):
		out = "/" + strings.TrimLeft(p, "/")
	case strings.HasPrefix(p, "~/"), strings.HasPrefix(p, "./"):
		out = p
	case strings.HasPrefix(p, "/"):
		out = "." + p
	default:
		out = p
	}
	// The result must compile as a pattern of the list.
	probe := &Rules{home: "/home", root: "/project"}
	if err := probe.add(SourceUser, out); err != nil {
		return "", fmt.Errorf("%q: %w", rule, err)
	}
	return out, nil
}

// ErrNotRead is wrapped by FromClaude for a rule that is not a Read rule.
var ErrNotRead = errors.New("not a Read(...) rule")
