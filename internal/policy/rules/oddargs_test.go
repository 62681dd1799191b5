package rules

import "testing"

// TestRulesSurviveOddWords runs every read-only rule, and the destructive,
// link and test classifiers, on argument words a shell can produce but a
// rule may not expect: empty words (set ”), lone dashes and pluses, and
// options missing their values. None may panic: the fuzzer found set ”
// indexing an empty word.
func TestRulesSurviveOddWords(t *testing.T) {
	odd := [][]string{{""}, {"", ""}, {"-"}, {"+"}, {"--"}, {"-o"}, {"+o"}, {"-", ""}, {"", "-"}, {"-o", ""}, {"--", ""}, {"=", ""}, {"-e"}, {"-f"}, {"-d"}, {"-n", ""}}
	for i := range readOnlyRules {
		for _, n := range readOnlyRules[i].Names {
			for _, a := range odd {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("ReadOnly(%q, %q) panics: %v", n, a, r)
						}
					}()
					ReadOnly(n, a)
					FollowsLinks(n, a)
					IsTestCommand(n, a)
					Destructive(append([]string{n}, a...), func(string) bool { return true })
				}()
			}
		}
	}
}
