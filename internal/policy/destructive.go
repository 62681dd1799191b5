package policy

import (
	"fmt"
	"github.com/odin-code/odin/internal/policy/rules"
	"github.com/odin-code/odin/internal/policy/shell"
	"os"
	"strings"
)

// RuleDestructive: a command that destroys work that cannot be recovered
// (rm -r, git reset --hard, git push --force...) is asked about even when
// an allowed pattern matches it, unless the pattern names the destructive
// form itself.
const RuleDestructive = "destructive"

// namesDestructive reports whether an allowed pattern that matches argv
// depends on its destructive words: with them replaced by a word no
// pattern could name, it no longer matches.
func namesDestructive(allowed []Pattern, argv []string, triggers []int) bool {
	neutral := make([]string, len(argv))
	copy(neutral, argv)
	for _, i := range triggers {
		if i < len(neutral) {
			neutral[i] = "\x00"
		}
	}
	for _, p := range allowed {
		if p.Match(argv) && !p.Match(neutral) {
			return true
		}
	}
	return false
}

// destructive asks about a destructive form that an allowed pattern let
// through without naming it. Commands no pattern allows already ask.
func (w *walker) destructive(argv []shell.Word, subject string, sc *scope, allowed bool) {
	if !allowed || w.ro || w.forbiddenOnly {
		return
	}
	t := shell.Texts(argv)
	exists := func(p string) bool {
		for _, cwd := range sc.cwds {
			if r, err := resolveShell(cwd, p); err == nil {
				if _, err := os.Lstat(r); err == nil {
					return true
				}
			}
		}
		return false
	}
	why, triggers := rules.Destructive(t, exists)
	if why == "" || namesDestructive(w.c.allowed, t, triggers) {
		return
	}
	last := 0
	for _, i := range triggers {
		last = max(last, i)
	}
	suggest := strings.Join(t[:last+1], " ") + " *"
	w.ask(RuleDestructive, subject, "cmd:"+subject, fmt.Sprintf("`%s` is destructive (%s): an allowed pattern matches it but does not name this form, so it is asked about (rule %s); a pattern that names it, such as `%s`, would allow it", subject, why, RuleDestructive, suggest))
}
