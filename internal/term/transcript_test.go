package term

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

func TestTranscriptTurn(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0)
	long := strings.Repeat("line\n", 10)
	o := messages.Origin{Agent: "orchestrator"}
	var got []string
	for _, ev := range []messages.Event{
		messages.TurnStarted{Input: messages.UserMessage{Body: long, Mode: messages.ModePlan}},
		messages.TextDelta{Origin: o, Text: "Looking"},
		messages.ToolStarted{Origin: o, Name: "Grep", Input: `{"pattern":"TODO"}`},
		messages.ToolFinished{Origin: o, Name: "Grep", Denied: true, Output: "Permission denied: no\nmore"},
		messages.ToolStarted{Origin: o, Name: "agent_code", Input: `{}`},
		messages.TextDelta{Origin: messages.Origin{Agent: "code", TaskID: "t"}, Text: "specialist text is not printed\n"},
		messages.AgentFinished{Report: messages.Report{Agent: "code", Status: messages.ReportTimeout, Error: "deadline 2m reached", Turns: 3, Elapsed: 2 * time.Minute}},
		messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnGateFailed, Error: "QA failed", Files: []string{"a.go"}, Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n",
			Gates: &messages.GateReport{Decision: messages.GateDecision{ReviewRequired: true, Reasons: []string{"2 files changed"}}, Stages: []messages.GateStageResult{{Stage: "qa", Round: 1, Summary: "go test failed"}}},
			Usage: messages.Usage{PromptTokens: 1500, CompletionTokens: 20, Cost: 0.5}, Elapsed: 3 * time.Second}},
	} {
		got = append(got, tr.event(ev)...)
	}
	want := []string{
		"", "❯ [plan] line", "  line", "  line", "  line", "  line", "  line", "  … 4 more lines",
		"Looking", "  ⏺ Grep TODO", "    ⎿ denied: Permission denied: no more",
		"  ✗ code timeout: deadline 2m reached (3 calls, 0 tokens, 2m00s)",
		"✗ quality gates failed: QA failed",
		"", "Files changed (1):", "  a.go", "", "--- a/a.go", "+++ b/a.go", "@@ -1 +1 @@", "-x", "+y",
		"", "Quality gates: FAILED after 0 fix round(s)", "  required because: 2 files changed", "  qa     round 2: failed  go test failed",
		"  3s · 1.5k in · 20 out · $0.5000",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	agent := tr.event(messages.TurnStarted{Input: messages.UserMessage{Body: "Analyse the project at /p\nmore", Mode: messages.ModeAsk, Agent: "init"}})
	if diff := cmp.Diff([]string{"", "❯ [ask] init agent: Analyse the project at /p"}, agent); diff != "" {
		t.Errorf("agent turn (-want +got):\n%s", diff)
	}
	// An answer that was not streamed is printed from the result.
	got = tr.event(messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone, Answer: "**done**"}})
	if got[0] != "**done**" {
		t.Errorf("unstreamed answer: %q", got)
	}
}
