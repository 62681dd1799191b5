package rules

import (
	"slices"
	"strings"
	"testing"
)

// TestReadOnlyRules runs every example of the read-only table: each Match
// is read-only, each NotMatch is not and says why, each names a command of
// its own rule, and no command has two rules.
func TestReadOnlyRules(t *testing.T) {
	owner := map[string]int{}
	for i, r := range readOnlyRules {
		if r.Why == "" || len(r.Match) == 0 {
			t.Errorf("rule %v: needs a reason and an example it matches", r.Names)
		}
		if r.Check != nil && len(r.NotMatch) == 0 && !slices.Contains(r.Names, "jobs") {
			t.Errorf("rule %v: a conditional rule needs an example it refuses", r.Names)
		}
		for _, n := range r.Names {
			if j, dup := owner[n]; dup {
				t.Errorf("%s has two rules (%d and %d)", n, j, i)
			}
			owner[n] = i
		}
		check := func(cmd string, want bool) {
			f := strings.Fields(cmd)
			if !slices.Contains(r.Names, f[0]) {
				t.Errorf("rule %v: example %q is for another command", r.Names, cmd)
			}
			got, why, sensitive := ReadOnly(f[0], f[1:])
			if got != want {
				t.Errorf("ReadOnly(%q) = %v (%s), want %v", cmd, got, why, want)
			}
			if !got && why == "" {
				t.Errorf("ReadOnly(%q): no reason", cmd)
			}
			if sensitive != (r.Check != nil) {
				t.Errorf("ReadOnly(%q): sensitive %v for a rule with Check %v", cmd, sensitive, r.Check != nil)
			}
		}
		for _, cmd := range r.Match {
			check(cmd, true)
		}
		for _, cmd := range r.NotMatch {
			check(cmd, false)
		}
	}
	for _, cmd := range notReadOnlyExamples {
		f := strings.Fields(cmd)
		if got, why, _ := ReadOnly(f[0], f[1:]); got || why == "" {
			t.Errorf("ReadOnly(%q) = %v (%q): no rule should name it", cmd, got, why)
		}
	}
}
