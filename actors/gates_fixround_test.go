package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// The Orchestrator executes the pipeline's steps as given: a review that
// blocks sends the change to the fixer, and the fixed change is reviewed
// again before anything else runs (here QA, which fails for want of a
// check runner).
func TestFixRoundIsReviewedAgain(t *testing.T) {
	reject := map[string]any{"files_reviewed": []string{"a.go"}, "overall_score": 2, "summary": "no", "approved": false,
		"issues": []any{map[string]any{"severity": "critical", "file": "a.go", "message": "nil deref", "category": "correctness"}}}
	approve := map[string]any{"files_reviewed": []string{"a.go"}, "issues": []any{}, "overall_score": 8, "summary": "fine", "approved": true}
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.go", "content": "package a\n"}),
				llmtest.Call("Write", map[string]string{"path": "{{root}}/b.go", "content": "package a\n"})),
			llmtest.Step{When: "wrote", Text: "wrote a.go and b.go"},
		).
		Add("review", report(reject), report(approve)).
		Add("code", report(map[string]any{"task": "fix", "summary": "fixed the nil deref"}))
	h := newHarness(t, s) // no check runner: QA, after the second review, fails
	h.sess.Submit("write two files", messages.ModeEdit)
	r := h.turn()
	if r.Gates == nil {
		t.Fatalf("no gate report: %+v", r)
	}
	var got []string
	for _, st := range r.Gates.Stages {
		got = append(got, st.Stage)
	}
	if diff := cmp.Diff([]string{"review", "fix", "review", "qa"}, got); diff != "" {
		t.Errorf("gate stages (-want +got):\n%s", diff)
	}
	if r.Gates.FixRounds != 1 || r.Status != messages.TurnGateFailed {
		t.Errorf("fix rounds %d, status %s (%s)", r.Gates.FixRounds, r.Status, r.Error)
	}
	if n := len(h.client.RequestsFor("review")); n != 2 {
		t.Errorf("review ran %d model calls, want 2 (before and after the fix)", n)
	}
}
