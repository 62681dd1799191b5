package actors

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// While the quality gates run the Orchestrator is in its gating
// behaviour: inputs queue, /compact is refused, and Cancel ends the turn
// (no final answer is synthesized) and lets the queue run.
func TestCancelWhileGating(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.go", "content": "package a\n"}),
				llmtest.Call("Write", map[string]string{"path": "{{root}}/b.go", "content": "package a\n"})),
			llmtest.Step{When: "wrote", Text: "interim: wrote a.go and b.go"},
			llmtest.Step{When: "next", Text: "next answer"},
		).
		Add("review", llmtest.Step{Hold: "review", Text: "never"})
	h := newHarness(t, s)
	h.sess.Submit("write two files", messages.ModeEdit)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := h.client.WaitHeld(ctx, "review"); err != nil {
		t.Fatal(err)
	}
	h.sess.Submit("next", messages.ModeAsk)
	next[messages.InputQueued](h)
	res, err := h.sess.Compact(ctx)
	if err != nil || res.Skipped != "the quality gates are running; compact when the turn ends" {
		t.Fatalf("compact while gating = %+v, %v", res, err)
	}
	h.sess.Cancel("enough")
	r := h.turn()
	if r.Status != messages.TurnCancelled || r.Gates == nil || len(r.Files) != 2 {
		t.Fatalf("turn = %+v, want cancelled during the gates", r)
	}
	if r.Answer != "interim: wrote a.go and b.go" || r.Interim != "" {
		t.Errorf("answer %q interim %q: a cancelled turn keeps the model's answer, unsynthesized", r.Answer, r.Interim)
	}
	if r := h.turn(); r.Input.Body != "next" || r.Answer != "next answer" {
		t.Fatalf("the queued input after the cancel = %+v", r)
	}
	h.client.Release("review")
	if n := len(h.client.RequestsFor(synthesisAgent)); n != 0 {
		t.Errorf("%d synthesis calls for a cancelled turn", n)
	}
}

// When the gates fail and the synthesis call fails too, the answer is
// assembled from the facts: how the gates ended, the interim answer
// marked as such, and (written by code) that the changes are on disk and
// odin undo restores them.
func TestGateFailureAnswerWithoutSynthesis(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.go", "content": "package a\n"}),
				llmtest.Call("Write", map[string]string{"path": "{{root}}/b.go", "content": "package a\n"})),
			llmtest.Step{When: "wrote", Text: "interim: wrote a.go and b.go"},
		).
		Add("review", llmtest.Calls(llmtest.Call("Report", map[string]any{"files_reviewed": []string{"a.go"}, "issues": []any{},
			"overall_score": 8, "summary": "fine", "approved": true})))
	h := newHarness(t, s) // no check runner: the mandatory QA gate fails
	h.sess.Submit("write two files", messages.ModeEdit)
	r := h.turn()
	if r.Status != messages.TurnGateFailed {
		t.Fatalf("status %s (%s), want gate failed", r.Status, r.Error)
	}
	if r.Interim != "interim: wrote a.go and b.go" {
		t.Errorf("interim = %q", r.Interim)
	}
	for _, want := range []string{"Quality gates failed after 0 fix round(s)", "Required because: multi-file change: 2 files changed.", "- review (round 1 of 3): passed", "- qa (round 1 of 3): failed",
		"written before the gates ran (it may be out of date)", "interim: wrote a.go and b.go",
		"**The quality gates failed**: QA is mandatory but no check runner is available.", "still on disk (a.go, b.go)", "`odin undo`"} {
		if !strings.Contains(r.Answer, want) {
			t.Errorf("answer lacks %q:\n%s", want, r.Answer)
		}
	}
}

func TestDiffStat(t *testing.T) {
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n ctx\n--- /dev/null\n+++ b/new.go\n@@ -0,0 +1 @@\n+package n\n"
	got := diffStat(diff)
	want := map[string][2]int{"x.go": {2, 1}, "new.go": {1, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
