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
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "")
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
		"", "Quality gates: FAILED after 0 fix rounds", "  required because: 2 files changed", "  qa     round 2: failed  go test failed",
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

// An answer synthesized after the gates follows the gate report, marked
// as the answer; the interim text streamed before is not repeated.
func TestTranscriptSynthesizedAnswerFollowsTheGates(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "")
	o := messages.Origin{Agent: "orchestrator"}
	var got []string
	for _, ev := range []messages.Event{
		messages.TurnStarted{Input: messages.UserMessage{Body: "add it", Mode: messages.ModeEdit}},
		messages.TextDelta{Origin: o, Text: "Interim: added it with Retry-After.\n"},
		messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone, Interim: "Interim: added it with Retry-After.",
			Answer: "Final: added it; review's fix round added Retry-After.",
			Gates:  &messages.GateReport{Passed: true, Decision: messages.GateDecision{ReviewRequired: true, Reasons: []string{"2 files changed"}}}}},
	} {
		got = append(got, tr.event(ev)...)
	}
	text := strings.Join(got, "\n")
	gates, answer := strings.Index(text, "Quality gates: PASSED"), strings.Index(text, "Answer:\nFinal: added it")
	if gates < 0 || answer < 0 || answer < gates {
		t.Errorf("the final answer does not follow the gate report:\n%s", text)
	}
	if strings.Count(text, "Interim:") != 1 {
		t.Errorf("the interim text is repeated:\n%s", text)
	}
}

// After a Resync (the terminal fell behind and streamed text was skipped)
// the answer is printed whole from the turn's result.
func TestTranscriptResyncPrintsTheAnswerWhole(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "")
	o := messages.Origin{Agent: "orchestrator"}
	var got []string
	for _, ev := range []messages.Event{
		messages.TurnStarted{Input: messages.UserMessage{Body: "go", Mode: messages.ModeAsk}},
		messages.TextDelta{Origin: o, Text: "The beginn"},
		messages.Resync{Dropped: 500},
		messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone, Answer: "The beginning and the end."}},
	} {
		got = append(got, tr.event(ev)...)
	}
	text := strings.Join(got, "\n")
	if !strings.Contains(text, "500 updates skipped") || !strings.Contains(text, "The beginning and the end.") {
		t.Errorf("resync not handled:\n%s", text)
	}
}

// A Resync after whole lines of the answer were printed (an attached
// REPL reconnecting after its events were dropped) keeps those lines:
// the result prints only the rest, in the code block they opened, and
// text streamed after the Resync waits for the result.
func TestTranscriptResyncKeepsWhatIsOnTheScreen(t *testing.T) {
	for _, color := range []Color{ColorNone, ColorFull} {
		tr := newTranscript(NewTheme(io.Discard, color), 0, "")
		o := messages.Origin{Agent: "orchestrator"}
		var got []string
		for _, ev := range []messages.Event{
			messages.TurnStarted{Input: messages.UserMessage{Body: "go", Mode: messages.ModeAsk}},
			messages.TextDelta{Origin: o, Text: "alpha line\n\n```go\nfmt.Println(1)\n| a | b |\n"},
			messages.TextDelta{Origin: o, Text: "partial li"},
			messages.Resync{Dropped: 5},
			messages.TextDelta{Origin: o, Text: "ne\n"},
			messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone, Answer: "alpha line\n\n```go\nfmt.Println(1)\n| a | b |\npartial line\n```\nomega line"}},
		} {
			got = append(got, tr.event(ev)...)
		}
		text := strings.Join(got, "\n")
		for _, want := range []string{"alpha line", "fmt.Println(1)", "partial line", "omega line"} {
			if n := strings.Count(text, want); n != 1 {
				t.Errorf("color %v: %q printed %d times, want once:\n%s", color, want, n, text)
			}
		}
		if color != ColorNone && strings.Contains(text, "```") {
			t.Errorf("color %v: the code fence opened before the Resync is printed as text:\n%s", color, text)
		}
	}
}

// A Resync whose printed part is not how the answer begins prints the
// answer whole.
func TestTranscriptResyncAnswerDiffersPrintsWhole(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "")
	o := messages.Origin{Agent: "orchestrator"}
	var got []string
	for _, ev := range []messages.Event{
		messages.TurnStarted{Input: messages.UserMessage{Body: "go", Mode: messages.ModeAsk}},
		messages.TextDelta{Origin: o, Text: "draft line\n"},
		messages.Resync{Dropped: 2},
		messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnDone, Answer: "final line one\nfinal line two"}},
	} {
		got = append(got, tr.event(ev)...)
	}
	text := strings.Join(got, "\n")
	if !strings.Contains(text, "final line one") || !strings.Contains(text, "final line two") {
		t.Errorf("the answer is not printed whole:\n%s", text)
	}
}

// TestTranscriptToolPathsRelativeToTheProject: the REPL shows a call's
// file inside the project relative to it, as odin run does, and one
// outside it absolute.
func TestTranscriptToolPathsRelativeToTheProject(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "/w/proj")
	o := messages.Origin{Agent: "orchestrator"}
	var got []string
	for _, in := range []string{`{"file_path":"/w/proj/api/server.go"}`, `{"file_path":"/etc/hosts"}`} {
		got = append(got, tr.event(messages.ToolStarted{Origin: o, Name: "ReadFile", Input: in})...)
	}
	want := []string{"  ⏺ ReadFile api/server.go", "  ⏺ ReadFile /etc/hosts"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
}
