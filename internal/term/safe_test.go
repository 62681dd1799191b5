package term

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// hostile carries every class of sequence a model or a file can aim at the
// terminal: OSC 52 clipboard, OSC 8 link, CSI clear, 8-bit CSI, DCS, a bare
// CR and a bidi override.
const hostile = "x\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\x1b[2J\u009b2J\x1bP1$r\x1b\\\rEVIL\u202eyz"

// assertOnlySGR fails when s holds a control other than an SGR sequence.
func assertOnlySGR(t *testing.T, where, s string) {
	t.Helper()
	plain := ansi.Strip(s)
	for _, r := range plain {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e' {
			t.Errorf("%s: control %U reaches the terminal in %q", where, r, s)
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			continue
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
			j++
		}
		if i+1 >= len(s) || s[i+1] != '[' || j >= len(s) || s[j] != 'm' {
			t.Errorf("%s: a non-SGR escape reaches the terminal in %q", where, s)
			return
		}
	}
	if strings.Contains(s, "cm0gLXJmIH4") || strings.Contains(s, "evil.example") {
		t.Errorf("%s: a sequence's payload reaches the terminal in %q", where, s)
	}
}

func TestTranscriptSanitizesUntrustedText(t *testing.T) {
	for _, level := range []Color{ColorNone, ColorMono, ColorFull} {
		tr := newTranscript(NewTheme(io.Discard, level), 60, "")
		o := messages.Origin{Agent: "orchestrator"}
		review, _ := json.Marshal(messages.ReviewResult{Issues: []messages.ReviewIssue{{Severity: "major", File: "a\x1b[2J.go", Message: hostile}}})
		var got []string
		for _, ev := range []messages.Event{
			messages.TurnStarted{Input: messages.UserMessage{Body: hostile, Mode: messages.ModeEdit}},
			messages.TextDelta{Origin: o, Text: "**" + hostile + "**\n`" + hostile + "`\n"},
			messages.TextDelta{Origin: o, Text: "```\n" + hostile + "\n```\n" + hostile},
			messages.ToolStarted{Origin: o, Name: "ReadFile", Input: `{"file_path":"/p/evil\u001b]52;c;cm0gLXJmIH4=\u0007.txt"}`},
			messages.ToolFinished{Origin: o, Name: "ReadFile", IsError: true, Output: hostile},
			messages.ToolFinished{Origin: messages.Origin{Agent: "code", TaskID: "t"}, Name: "ExecuteCommand", Denied: true, Output: hostile},
			messages.AgentStarted{Agent: "code", TaskID: "t", Description: hostile, Model: "m"},
			messages.AgentFinished{Report: messages.Report{Agent: "review", Status: messages.ReportOK, Summary: hostile, Result: review}},
			messages.Notice{Level: "warn", Text: hostile},
			messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "review", Summary: hostile}, Done: true},
			messages.TurnFinished{Result: messages.TurnResult{Status: messages.TurnFailed, Error: hostile, Answer: hostile,
				Files: []string{"/p/evil\x1b]52;c;cm0gLXJmIH4=\x07.go"}, Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-" + hostile + "\n+" + hostile + "\n",
				Gates: &messages.GateReport{Decision: messages.GateDecision{ReviewRequired: true, Reasons: []string{hostile}},
					Stages: []messages.GateStageResult{{Stage: "review", Summary: hostile}},
					Review: &messages.ReviewResult{Issues: []messages.ReviewIssue{{Severity: "major", File: hostile, Message: hostile}}},
					QA:     &messages.QAResult{Checks: []messages.QACheck{{Name: hostile, Command: hostile}}}}}},
		} {
			got = append(got, tr.event(ev)...)
		}
		got = append(got, tr.md.Partial())
		for _, l := range got {
			assertOnlySGR(t, "transcript", l)
		}
		if level == ColorNone {
			for _, l := range got {
				if strings.ContainsRune(l, 0x1b) {
					t.Errorf("ColorNone line carries an escape: %q", l)
				}
			}
		}
	}
}

func TestActivityLinesSanitize(t *testing.T) {
	var a Activity
	now := time.Unix(0, 0)
	a.Apply(messages.TurnStarted{Input: messages.UserMessage{Body: "x"}}, now)
	a.Apply(messages.ToolStarted{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ExecuteCommand", Input: `{"command":"printf '\u001b]52;c;cm0gLXJmIH4=\u0007'"}`}, now)
	a.Apply(messages.AgentStarted{Agent: "code", TaskID: "t", Description: hostile}, now)
	a.Apply(messages.AgentProgress{Agent: "code", TaskID: "t", Activities: []string{hostile}}, now)
	a.Apply(messages.TodosUpdated{Todos: []messages.Todo{{Content: hostile, Status: "in_progress"}}}, now)
	for _, l := range a.Lines(NewTheme(io.Discard, ColorFull), now, 200, 0) {
		assertOnlySGR(t, "status", l)
	}
}

func TestVerdict(t *testing.T) {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	for _, tc := range []struct {
		name string
		r    messages.Report
		ok   bool
		word string
	}{
		{"plain ok", messages.Report{Status: messages.ReportOK}, true, "ok"},
		{"timeout", messages.Report{Status: messages.ReportTimeout}, false, "timeout"},
		{"approved review", messages.Report{Status: messages.ReportOK, Result: raw(messages.ReviewResult{Approved: true})}, true, "ok"},
		{"review with a major issue", messages.Report{Status: messages.ReportOK, Result: raw(messages.ReviewResult{Approved: true, Issues: []messages.ReviewIssue{{Severity: "major"}}})}, false, "changes requested"},
		{"review not approved", messages.Report{Status: messages.ReportOK, Result: raw(map[string]any{"approved": false})}, false, "changes requested"},
		{"QA failed", messages.Report{Status: messages.ReportOK, Result: raw(messages.QAResult{Passed: false})}, false, "failed"},
		{"QA passed", messages.Report{Status: messages.ReportOK, Result: raw(messages.QAResult{Passed: true})}, true, "ok"},
		{"tests failed", messages.Report{Status: messages.ReportOK, Result: raw(messages.TestResult{Passed: 3, Failed: 2})}, false, "2 failed"},
		{"tests passed", messages.Report{Status: messages.ReportOK, Result: raw(messages.TestResult{Passed: 3})}, true, "ok"},
		{"search result", messages.Report{Status: messages.ReportOK, Result: raw(map[string]any{"files": []string{"a"}})}, true, "ok"},
	} {
		ok, word := present.Verdict(tc.r)
		if ok != tc.ok || word != tc.word {
			t.Errorf("%s: Verdict = %v %q, want %v %q", tc.name, ok, word, tc.ok, tc.word)
		}
	}
}

func TestFailedReviewIsNotMarkedOK(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 0, "")
	res, _ := json.Marshal(messages.ReviewResult{Issues: []messages.ReviewIssue{{Severity: "critical", Message: "sql injection"}}})
	got := tr.event(messages.AgentFinished{Report: messages.Report{Agent: "review", Status: messages.ReportOK, Summary: "1 critical issue", Result: res, Turns: 1}})
	if diff := cmp.Diff([]string{"  ✗ review changes requested: 1 critical issue (1 call, 0 tokens, 0s)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStageRoundsCountFromOne(t *testing.T) {
	g := &messages.GateReport{Decision: messages.GateDecision{ReviewRequired: true}, FixRounds: 1, Stages: []messages.GateStageResult{
		{Stage: "review", Round: 0, Passed: true}, {Stage: "qa", Round: 0}, {Stage: "fix", Round: 1, Passed: true},
		{Stage: "review", Round: 1, Passed: true}, {Stage: "qa", Round: 1, Passed: true},
	}, Passed: true}
	want := []string{
		"Quality gates: PASSED after 1 fix round",
		"  review round 1: passed  ", "  qa     round 1: failed  ", "  fix    round 1: applied ",
		"  review round 2: passed  ", "  qa     round 2: passed  ",
	}
	if diff := cmp.Diff(want, gateLines(NewTheme(io.Discard, ColorNone), g)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := present.Plural(1, "call") + ", " + present.Plural(2, "call") + ", " + present.Plural(0, "call"); got != "1 call, 2 calls, 0 calls" {
		t.Errorf("Plural: %q", got)
	}
}

func TestTruncateKeepsCharactersWhole(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 50), strings.Repeat("日本", 30), strings.Repeat("👍🏽", 30)} {
		for w := 1; w < 40; w++ {
			got := Truncate(s, w)
			if !strings.HasSuffix(got, "…") || ansi.StringWidth(got) > w {
				t.Errorf("Truncate(%q, %d) = %q (width %d)", s[:8], w, got, ansi.StringWidth(got))
			}
			if strings.ContainsRune(got, '\ufffd') {
				t.Errorf("Truncate(%q, %d) cut a character: %q", s[:8], w, got)
			}
		}
	}
}

func TestWrapWordsNeverBreaksAFlag(t *testing.T) {
	got := WrapWords("run with --allow 'go test *' or --add-dir /a/very/long/path/that/is/wider/than/the/width now", 12)
	want := []string{"run with", "--allow 'go", "test *' or", "--add-dir", "/a/very/long/path/that/is/wider/than/the/width", "now"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDenialWrappedToTheTranscriptWidth(t *testing.T) {
	tr := newTranscript(NewTheme(io.Discard, ColorNone), 40, "")
	text := "Permission denied: `rm -rf build` needs approval. To allow it without asking, run with --allow 'rm *' or --yolo. Ask the user."
	got := tr.event(messages.ToolFinished{Origin: messages.Origin{Agent: "test", TaskID: "t"}, Denied: true, Output: text})
	for _, l := range got {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("line wider than 40: %q", l)
		}
	}
	if !strings.HasPrefix(got[0], "    ⎿ test denied: Permission") || strings.Join(strings.Fields(strings.Join(got, " ")), " ") != "⎿ test denied: "+text {
		t.Errorf("denial not whole:\n%s", strings.Join(got, "\n"))
	}
}

// TestLineModeWritesNoControlSequence: line mode styles nothing, so not a
// single ESC, BEL or C1 control reaches its output, whatever the model,
// a tool or a command result says.
func TestLineModeWritesNoControlSequence(t *testing.T) {
	f := newFake("s1", func(f *fakeSession, m messages.UserMessage) {
		o := messages.Origin{Agent: "orchestrator"}
		f.emit(messages.TurnStarted{Input: m},
			messages.TextDelta{Origin: o, Text: "**" + hostile + "**\n"},
			messages.ToolStarted{Origin: o, Name: "ReadFile", Input: `{"file_path":"/p/x\u001b]52;c;cm0gLXJmIH4=\u0007"}`},
			messages.ToolFinished{Origin: o, Name: "ReadFile", Denied: true, Output: hostile},
			messages.ApprovalRequested{ID: "a1", Tool: "ExecuteCommand", Subject: hostile},
			messages.TurnFinished{Result: messages.TurnResult{Input: m, Status: messages.TurnDone, Answer: hostile, Diff: "+" + hostile + "\n", Files: []string{hostile}}})
	})
	var out syncBuffer
	cmd := Command{Name: "show", Run: func(context.Context, string) (Result, error) { return Result{Text: hostile}, nil }}
	if _, err := Run(t.Context(), Options{In: strings.NewReader("go\n/show\n"), Out: &out, Session: f, Mode: messages.ModeEdit,
		Commands: []Command{cmd}, Interactive: new(bool)}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x80 && r <= 0x9f) || r == '\u202e' {
			t.Fatalf("line mode wrote control %U:\n%q", r, s)
		}
	}
	if strings.Contains(s, "cm0gLXJmIH4") || !strings.Contains(s, "link") {
		t.Errorf("payload shown or text lost:\n%s", s)
	}
}
