package actors

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// taskBrief is the brief a specialist's request carries: its first user
// message, without the role Odin puts before it.
func taskBrief(t *testing.T, r llm.Request) string {
	t.Helper()
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			text := m.Content
			if _, task, ok := strings.Cut(text, "# Your task\n"); ok {
				return task
			}
			return text
		}
	}
	t.Fatalf("%s request without a user message", r.Agent)
	return ""
}

// Only the first gate round is sent the whole diff: the fixer and the
// second review get the earlier rounds' outcomes and the diff since the
// round before (here nothing: the stand-in fixer changes no file), so the
// change set is not repeated in every round's brief.
func TestLaterGateRoundsGetOnlyTheDiffSince(t *testing.T) {
	reject := map[string]any{"files_reviewed": []string{"a.go"}, "overall_score": 2, "summary": "nil deref in A", "approved": false,
		"issues": []any{map[string]any{"severity": "critical", "file": "a.go", "message": "nil deref", "category": "correctness"}}}
	approve := map[string]any{"files_reviewed": []string{"a.go"}, "issues": []any{}, "overall_score": 8, "summary": "fine", "approved": true}
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.go", "content": "package a\n\nvar marker = 1\n"}),
				llmtest.Call("Write", map[string]string{"path": "{{root}}/b.go", "content": "package a\n"})),
			llmtest.Step{When: "wrote", Text: "wrote a.go and b.go"},
		).
		Add("review", report(reject), report(approve)).
		Add("code", report(map[string]any{"task": "fix", "summary": "fixed the nil deref"}))
	h := newHarness(t, s)
	h.sess.Submit("write two files", messages.ModeEdit)
	if r := h.turn(); r.Gates == nil || r.Gates.FixRounds != 1 {
		t.Fatalf("want one fix round, got %+v", r.Gates)
	}
	reviews, fixes := h.client.RequestsFor("review"), h.client.RequestsFor("code")
	if len(reviews) != 2 || len(fixes) != 1 {
		t.Fatalf("%d review and %d code requests, want 2 and 1", len(reviews), len(fixes))
	}
	first := taskBrief(t, reviews[0])
	if !strings.Contains(first, "```diff") || !strings.Contains(first, "+var marker = 1") {
		t.Fatalf("the first round lacks the whole diff:\n%s", first)
	}
	// The whole diff names each file and the root is said once: a list
	// of the files before it would say them twice.
	for text, want := range map[string]int{"a.go": 1, "b.go": 1, h.root: 1} {
		if n := strings.Count(first, text); n != want {
			t.Errorf("the first round's brief names %q %d times, want %d:\n%s", text, n, want, first)
		}
	}
	for name, brief := range map[string]string{"fix": taskBrief(t, fixes[0]), "second review": taskBrief(t, reviews[1])} {
		if strings.Contains(brief, "+var marker = 1") || strings.Contains(brief, "```diff") {
			t.Errorf("the %s brief repeats the diff:\n%s", name, brief)
		}
		for _, want := range []string{"review (round 1): failed", "nil deref in A", "Nothing changed since the last round", "under " + h.root + ":\n- a.go\n- b.go\n"} {
			if !strings.Contains(brief, want) {
				t.Errorf("the %s brief lacks %q:\n%s", name, want, brief)
			}
		}
	}
	// The answer written after the gates is sent what the fix rounds
	// changed after the interim answer, not the whole diff again.
	synth := h.client.RequestsFor(synthesisAgent)
	if len(synth) != 1 {
		t.Fatalf("%d synthesis requests, want 1", len(synth))
	}
	if facts := taskBrief(t, synth[0]); strings.Contains(facts, "+var marker = 1") || !strings.Contains(facts, "The fix rounds changed no code after it.") {
		t.Errorf("the synthesis request repeats the diff or misses that nothing changed:\n%s", facts)
	}
	if !strings.Contains(taskBrief(t, reviews[1]), "fix (round 1): applied") {
		t.Errorf("the second review is not told of the fix:\n%s", taskBrief(t, reviews[1]))
	}
}
