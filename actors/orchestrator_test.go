package actors

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"

	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

func TestSimpleTurnWithTools(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "a"}), llmtest.Call("Echo", map[string]any{"text": "b"})),
		llmtest.Reply("done: a and b"),
	)
	h := newHarness(t, s)
	h.sess.Submit("say a and b", messages.ModeAsk)
	res := h.turn()
	if res.Status != messages.TurnDone || res.Answer != "done: a and b" {
		t.Fatalf("turn = %+v", res)
	}
	if len(res.ToolCalls) != 2 || res.Usage.TotalTokens == 0 {
		t.Errorf("tool calls %v, usage %+v", res.ToolCalls, res.Usage)
	}
	reqs := h.client.RequestsFor("orchestrator")
	last := reqs[len(reqs)-1].Messages
	var results []string
	for _, m := range last {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if !cmp.Equal(results, []string{"echo: a", "echo: b"}) {
		t.Errorf("tool results sent back = %q", results)
	}
}

// Inputs that arrive while a turn runs are queued and processed in arrival
// order, each with its own mode.
func TestQueuedInputsKeepOrderAndMode(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{Text: "first", Hold: "first"},
		llmtest.Reply("second"), llmtest.Reply("third"), llmtest.Reply("fourth"),
	)
	h := newHarness(t, s)
	h.sess.Submit("one", messages.ModeEdit)
	if err := h.client.WaitHeld(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	h.sess.Submit("two", messages.ModeAsk)
	h.sess.Submit("three", messages.ModePlan)
	h.sess.Submit("four", messages.ModeEdit)
	q, err := h.sess.Queue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if q.Running == nil || q.Running.Body != "one" || len(q.Queued) != 3 || q.Queued[0].Mode != messages.ModeAsk {
		t.Fatalf("queue = %+v", q)
	}
	h.client.Release("first")
	var got []string
	for range 4 {
		r := h.turn()
		got = append(got, r.Input.Body+"/"+string(r.Input.Mode)+"/"+r.Answer)
	}
	want := []string{"one/edit/first", "two/ask/second", "three/plan/third", "four/edit/fourth"}
	if !cmp.Equal(got, want) {
		t.Fatal(cmp.Diff(want, got))
	}
	// Each request carried its own mode's role and tools, and the same
	// system message: the mode is in the role, after the tools, so a
	// switch keeps the cached prefix.
	reqs := h.client.RequestsFor("orchestrator")
	for i, mode := range []string{"edit", "ask", "plan", "edit"} {
		if !strings.Contains(reqs[i].Messages[1].Content, "# Mode: "+mode) {
			t.Errorf("request %d lacks mode %s in its role", i, mode)
		}
		if sys := reqs[i].Messages[0].Content; sys != reqs[0].Messages[0].Content || strings.Contains(sys, "Mode: ") {
			t.Errorf("request %d (%s): the system message changed with the mode:\n%s", i, mode, sys)
		}
		hasWrite := slices.Contains(toolNames(reqs[i]), "Write")
		if hasWrite != (mode == "edit") {
			t.Errorf("request %d (%s) offers Write = %v", i, mode, hasWrite)
		}
	}
	// The plan-mode answer was saved as a plan file.
	if _, err := os.Stat(filepath.Join(h.root, ".odin", "plans", "three.md")); err != nil {
		t.Errorf("plan file: %v", err)
	}
}

func TestRemoveQueued(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator", llmtest.Step{Text: "a", Hold: "a"}, llmtest.Reply("c"))
	h := newHarness(t, s)
	h.sess.Submit("a", messages.ModeAsk)
	if err := h.client.WaitHeld(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	b := h.sess.Submit("b", messages.ModeAsk)
	h.sess.Submit("c", messages.ModeAsk)
	q, err := h.sess.Remove(t.Context(), b.ID)
	if err != nil || len(q.Queued) != 1 || q.Queued[0].Body != "c" {
		t.Fatalf("after remove: %+v, %v", q, err)
	}
	h.client.Release("a")
	if r := h.turn(); r.Input.Body != "a" {
		t.Fatalf("first turn %q", r.Input.Body)
	}
	if r := h.turn(); r.Input.Body != "c" || r.Answer != "c" {
		t.Fatalf("second turn %+v", r)
	}
}

// A Cancel while the model call is held ends the turn at once, and the
// session keeps serving.
func TestCancelDuringModelCall(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{Text: "never", Hold: "forever"},
		llmtest.Reply("after cancel"),
	)
	h := newHarness(t, s)
	h.sess.Submit("slow", messages.ModeEdit)
	if err := h.client.WaitHeld(t.Context(), "forever"); err != nil {
		t.Fatal(err)
	}
	h.sess.Cancel("user pressed Ctrl-C")
	r := h.turn()
	if r.Status != messages.TurnCancelled || !strings.Contains(r.Error, "Ctrl-C") {
		t.Fatalf("cancelled turn = %+v", r)
	}
	// The cut call's usage never arrived: its cost is unknown, not $0.
	if !r.Usage.CostUnknown {
		t.Errorf("cancelled mid-call: usage %+v, want cost unknown", r.Usage)
	}
	h.sess.Submit("again", messages.ModeEdit)
	if r := h.turn(); r.Status != messages.TurnDone || r.Answer != "after cancel" || r.Usage.CostUnknown {
		t.Fatalf("next turn = %+v", r)
	}
}

// Cancelling while a tool runs records the call as cancelled, so the
// history sent next is valid (every tool call has its result).
func TestCancelDuringToolKeepsHistoryValid(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.Call("Slow", map[string]any{"text": "x"})),
		llmtest.Reply("ok"),
	)
	h := newHarness(t, s)
	h.sess.Submit("run slow", messages.ModeEdit)
	next[messages.ToolStarted](h)
	h.sess.Cancel("")
	if r := h.turn(); r.Status != messages.TurnCancelled {
		t.Fatalf("status %s", r.Status)
	}
	h.sess.Submit("next", messages.ModeEdit)
	h.turn()
	reqs := h.client.RequestsFor("orchestrator")
	msgs := reqs[len(reqs)-1].Messages
	calls, results := map[string]bool{}, map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	for id := range calls {
		if !strings.Contains(results[id], "cancelled") {
			t.Errorf("call %s has result %q, want a cancelled result", id, results[id])
		}
	}
	if len(calls) != 1 {
		t.Errorf("history has %d tool calls", len(calls))
	}
}

func TestModelFailureFailsTurnAndSessionContinues(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{Status: 401},
		llmtest.Reply("fine now"),
	)
	h := newHarness(t, s)
	h.sess.Submit("x", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnFailed || !strings.Contains(r.Error, "auth") {
		t.Fatalf("turn = %+v", r)
	}
	h.sess.Submit("y", messages.ModeAsk)
	if r := h.turn(); r.Answer != "fine now" {
		t.Fatalf("turn = %+v", r)
	}
}

func TestMaxTurns(t *testing.T) {
	loop := llmtest.Calls(llmtest.Call("Echo", map[string]any{"text": "again"}))
	s := llmtest.NewScript().Add("orchestrator", loop, loop, loop)
	h := newHarness(t, s, withConfig(func(c *config.Config) { c.MaxTurns = 2 }))
	h.sess.Submit("loop", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnFailed || !strings.Contains(r.Error, "turn limit (2") {
		t.Fatalf("turn = %+v", r)
	}
}

func TestInvalidToolArgumentsGoBackToTheModel(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(llmtest.ToolCall{Name: "Echo", Arguments: llmtest.RawArgs(`{"text": "unterminated`)}),
		llmtest.Step{When: "invalid JSON", Text: "I will fix my arguments"},
	)
	h := newHarness(t, s)
	h.sess.Submit("x", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone || r.Answer != "I will fix my arguments" {
		t.Fatalf("turn = %+v (unused steps %v)", r, h.client.Unused())
	}
}
