package actors

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/messages"
)

// The synthesis brief states each gate outcome once: the stage lines carry
// the verdicts and summaries, the last review's findings follow once with
// the blocking ones marked, and QA's checks once with their exit codes.
func TestSynthesisFactsStateEachOutcomeOnce(t *testing.T) {
	major := messages.ReviewIssue{Severity: "major", File: "api/a.go", Line: 3, Message: "the limiter never refills", Category: "correctness"}
	minor := messages.ReviewIssue{Severity: "minor", File: "api/a.go", Line: 9, Message: "the limit is hard-coded", Category: "maintenance"}
	report := messages.GateReport{
		FixRounds: 1,
		Stages: []messages.GateStageResult{
			{Stage: "review", Round: 1, Passed: false, Summary: "the bucket never refills"},
			{Stage: "qa", Round: 1, Passed: true, Summary: "3 checks passed"},
		},
		Review: &messages.ReviewResult{Summary: "the bucket never refills", Issues: []messages.ReviewIssue{major, minor}},
		QA: &messages.QAResult{Passed: true, Summary: "3 checks passed", Checks: []messages.QACheck{
			{Name: "build", Command: "go build ./...", Passed: true},
			{Name: "test", Command: "go test ./...", Passed: true},
		}},
	}
	got := synthesisFacts("add a limiter", "Done.", []string{"api/a.go"}, "", true, "", report, messages.TurnGateFailed, "review rejected it")
	for text, want := range map[string]int{
		"the bucket never refills": 1,
		"3 checks passed":          1,
		"[major] (blocking) api/a.go:3 the limiter never refills": 1,
		"[minor] api/a.go:9 the limit is hard-coded":              1,
		"the limit is hard-coded":                                 1,
		"- build `go build ./...`: exit 0":                        1,
		"- test `go test ./...`: exit 0":                          1,
	} {
		if n := strings.Count(got, text); n != want {
			t.Errorf("%q appears %d times, want %d:\n%s", text, n, want, got)
		}
	}

	// A review that approved nothing and named no blocking finding
	// still blocks, and says so.
	report.Review = &messages.ReviewResult{Summary: "not convinced"}
	got = synthesisFacts("add a limiter", "Done.", nil, "", true, "", report, messages.TurnGateFailed, "review rejected it")
	if !strings.Contains(got, "- (blocking) the review did not approve the change: not convinced") {
		t.Errorf("the unapproved review is not named as blocking:\n%s", got)
	}
}
