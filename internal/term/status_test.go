package term

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

func TestActivityLines(t *testing.T) {
	th := NewTheme(io.Discard, ColorNone)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var a Activity
	if a.Lines(th, t0, 80, 0) != nil || a.Busy() {
		t.Fatalf("idle activity renders lines")
	}
	o := messages.Origin{Agent: "orchestrator"}
	steps := []struct {
		at time.Duration
		ev messages.Event
	}{
		{0, messages.TurnStarted{Input: messages.UserMessage{ID: "1", Body: "fix it", Mode: messages.ModeEdit}}},
		{time.Second, messages.TextDelta{Origin: o, Text: strings.Repeat("x", 4000)}},
		{2 * time.Second, messages.AgentStarted{TaskID: "t1", Agent: "code", Description: "apply the fix"}},
		{2 * time.Second, messages.AgentStarted{TaskID: "t2", Agent: "review", Description: "review it"}},
		{3 * time.Second, messages.ToolStarted{Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Name: "EditTool", Input: `{"file_path":"/p/main.go"}`}},
		{4 * time.Second, messages.UsageUpdated{Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Usage: messages.Usage{TotalTokens: 12500}}},
		{4 * time.Second, messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "review", Round: 1, TaskID: "t2"}}},
		{5 * time.Second, messages.TodosUpdated{Todos: []messages.Todo{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "pending"}}}},
	}
	for _, s := range steps {
		a.Apply(s.ev, t0.Add(s.at))
	}
	got := a.Lines(th, t0.Add(75*time.Second), 200, 1)
	want := []string{
		"⠙ odin waiting for agents · 1m15s · ↓ 1.0k tokens",
		"  ⠙ code apply the fix · 1m13s · 12k tok · 1 tool · EditTool /p/main.go",
		"  ⠙ review review it · 1m13s [review round 2]", // Round 1: after one fix round, the second pass
		"  ⚖ quality gates: review round 2",
		"  ☐ todos 1/3 · b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	for _, l := range a.Lines(th, t0, 24, 0) {
		if ansi.StringWidth(l) > 24 {
			t.Errorf("line %q wider than 24", l)
		}
	}
	a.Apply(messages.AgentFinished{Report: messages.Report{TaskID: "t1"}}, t0)
	a.Apply(messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "review", Round: 1, Passed: true}, Done: true}, t0)
	if n := len(a.Lines(th, t0, 200, 0)); n != 3 {
		t.Errorf("after code finished and review passed: %d lines, want 3 (odin, review, todos)", n)
	}
	a.Apply(messages.ApprovalRequested{ID: "x"}, t0)
	if l := a.Lines(th, t0, 200, 0)[0]; !strings.Contains(l, "waiting for your approval") {
		t.Errorf("head while an approval waits: %q", l)
	}
	a.Apply(messages.TurnFinished{}, t0)
	if a.Busy() || a.Lines(th, t0, 80, 0) != nil {
		t.Errorf("still busy after TurnFinished")
	}
}

// A specialist's own todo list is shown under its line; the session's list
// stays at the bottom, and a list of an agent not running is not shown.
func TestSpecialistTodosUnderTheirAgent(t *testing.T) {
	th := NewTheme(io.Discard, ColorNone)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var a Activity
	a.Apply(messages.TurnStarted{Input: messages.UserMessage{ID: "1", Body: "go", Mode: messages.ModeEdit}}, t0)
	a.Apply(messages.AgentStarted{TaskID: "t1", Agent: "code", Description: "apply"}, t0)
	a.Apply(messages.AgentStarted{TaskID: "t2", Agent: "review", Description: "check"}, t0)
	a.Apply(messages.TodosUpdated{Agent: "code", TaskID: "t1", Todos: []messages.Todo{{ID: "1", Content: "read main.go", Status: "completed"}, {ID: "2", Content: "edit Run", Status: "in_progress"}}}, t0)
	a.Apply(messages.TodosUpdated{Agent: "gone", TaskID: "t9", Todos: []messages.Todo{{ID: "1", Content: "LOST", Status: "pending"}}}, t0)
	a.Apply(messages.TodosUpdated{Todos: []messages.Todo{{ID: "a", Content: "plan", Status: "in_progress"}}}, t0)
	got := a.Lines(th, t0, 200, 0)
	want := []string{
		"⠋ odin waiting for agents · 0s",
		"  ⠋ code apply · 0s",
		"    ☐ todos 1/2 · edit Run",
		"  ⠋ review check · 0s",
		"  ☐ todos 0/1 · plan",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// An agent's declared colour paints its name in the status area and the
// transcript; others stay bold, and nothing is painted without colour.
func TestAgentColors(t *testing.T) {
	th := NewTheme(io.Discard, ColorFull)
	th.SetAgentColors(map[string]string{"scout": "cyan", "auditor": "#ff8800"})
	if got := th.Agent("scout"); !strings.Contains(got, "38;5;51") || !strings.Contains(got, "scout") {
		t.Errorf("scout = %q, want colour 51", got)
	}
	// The theme's profile is 256 colours: #ff8800 becomes its nearest, 208.
	if got := th.Agent("auditor"); !strings.Contains(got, "38;5;208") {
		t.Errorf("auditor = %q, want #ff8800 as 208", got)
	}
	if got, bold := th.Agent("code"), th.Paint(th.Bold, "code"); got != bold {
		t.Errorf("code = %q, want plain bold %q", got, bold)
	}
	plain := NewTheme(io.Discard, ColorNone)
	plain.SetAgentColors(map[string]string{"scout": "cyan"})
	if got := plain.Agent("scout"); got != "scout" {
		t.Errorf("without colour: %q", got)
	}
	tr := newTranscript(th, 80, "")
	lines := tr.event(messages.AgentStarted{TaskID: "t1", Agent: "scout", Description: "look"})
	if !strings.Contains(strings.Join(lines, "\n"), "38;5;51") {
		t.Errorf("transcript line lacks scout's colour: %q", lines)
	}
}
