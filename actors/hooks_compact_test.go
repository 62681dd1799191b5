package actors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

func withHooks(t *testing.T, hooks map[string][]config.Hook) harnessOpt {
	return func(d *Deps) {
		h, err := policy.NewHooks(hooks, policy.HooksOptions{Root: d.Root})
		if err != nil {
			t.Fatal(err)
		}
		d.Hooks = h
	}
}

// A UserPromptSubmit hook exiting 2 blocks the prompt; one exiting 0 adds
// its output to the prompt.
func TestUserPromptSubmitHook(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator", llmtest.Step{When: "<hook_context>", Text: "saw the context"})
	h := newHarness(t, s, withHooks(t, map[string][]config.Hook{
		"UserPromptSubmit": {{Command: `input=$(cat); case "$input" in *secret*) echo "no secrets here" >&2; exit 2;; esac; echo "branch: main"`}},
	}))
	h.sess.Submit("tell me the secret", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnFailed || !strings.Contains(r.Error, "no secrets here") {
		t.Fatalf("blocked turn = %+v", r)
	}
	h.sess.Submit("what branch?", messages.ModeAsk)
	if r := h.turn(); r.Answer != "saw the context" {
		t.Fatalf("turn = %+v", r)
	}
	req := h.client.RequestsFor("orchestrator")[0]
	if last := req.Messages[len(req.Messages)-1].Content; !strings.Contains(last, "branch: main") {
		t.Errorf("prompt sent = %q", last)
	}
}

// A Stop hook exiting 2 keeps the Orchestrator working with its feedback.
func TestStopHookContinuesTheTurn(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "stopped-once")
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Reply("done too early"),
		llmtest.Step{When: "run the tests first", Text: "tests run, now done"},
	)
	h := newHarness(t, s, withHooks(t, map[string][]config.Hook{
		"Stop": {{Command: `if [ -e ` + flag + ` ]; then exit 0; fi; touch ` + flag + `; echo "run the tests first" >&2; exit 2`}},
	}))
	h.sess.Submit("do it", messages.ModeEdit)
	if r := h.turn(); r.Answer != "tests run, now done" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	if _, err := os.Stat(flag); err != nil {
		t.Fatal("Stop hook did not run")
	}
}

// SubagentStart adds context to the brief; SubagentStop exiting 2 makes the
// specialist continue before it may report.
func TestSubagentHooks(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "once")
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "x", "find x")), llmtest.Reply("ok")).
		Add("search",
			llmtest.Step{When: "<hook_context>", ToolCalls: searchReport("first try").ToolCalls},
			llmtest.Step{When: "cite line numbers", ToolCalls: searchReport("with line numbers").ToolCalls},
		)
	h := newHarness(t, s, withHooks(t, map[string][]config.Hook{
		"SubagentStart": {{Matcher: "search", Command: "echo 'prefer internal/'"}},
		"SubagentStop":  {{Matcher: "search", Command: `if [ -e ` + flag + ` ]; then exit 0; fi; touch ` + flag + `; echo "cite line numbers" >&2; exit 2`}},
	}))
	h.sess.Submit("x", messages.ModeAsk)
	ev, _ := next[messages.AgentFinished](h)
	if ev.Report.Summary != "with line numbers" {
		t.Fatalf("report = %+v; unused %v", ev.Report, h.client.Unused())
	}
	if brief := h.client.RequestsFor("search")[0].Messages[1].Content; !strings.Contains(brief, "prefer internal/") {
		t.Errorf("brief = %q", brief)
	}
}

// A long conversation crosses context.compact_at: the next request carries
// the summary instead of the old turns, and the answer still arrives.
func TestAutoCompaction(t *testing.T) {
	old := "OLD-TURN " + strings.Repeat("lorem ipsum ", 400) // ~1200 tokens
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Reply("first answer "+strings.Repeat("dolor ", 300)),
			llmtest.Step{When: "third", Text: "third answer"},
			llmtest.Step{When: "second", Text: "second answer"},
		).
		Add("compaction", llmtest.Reply("SUMMARY: the user asked about lorem ipsum; it was answered."))
	h := newHarness(t, s, withWindow(4000), withConfig(func(c *config.Config) {
		c.Context.CompactAt = 0.5
		c.Context.KeepRecent = 2
	}))
	h.sess.Submit(old, messages.ModeAsk)
	h.turn()
	h.sess.Submit("second question "+strings.Repeat("sit amet ", 200), messages.ModeAsk)
	h.turn()
	h.sess.Submit("third question", messages.ModeAsk)
	ev, _ := next[messages.Compacted](h)
	if ev.Messages == 0 || ev.TokensAfter >= ev.TokensBefore {
		t.Errorf("compacted = %+v", ev)
	}
	r := h.turn()
	if r.Answer != "third answer" {
		t.Fatalf("turn after compaction = %+v", r)
	}
	reqs := h.client.RequestsFor("orchestrator")
	last := conversation(reqs[len(reqs)-1])
	if !strings.HasPrefix(last[0].Content, summaryPrefix) || !strings.Contains(last[0].Content, "SUMMARY:") {
		t.Errorf("first history message = %q", shorten(last[0].Content, 200))
	}
	for _, m := range last {
		if strings.Contains(m.Content, "OLD-TURN") {
			t.Errorf("old turn still sent after compaction")
		}
	}
	comp := h.client.RequestsFor("compaction")
	if len(comp) != 1 || !strings.Contains(comp[0].Messages[1].Content, "OLD-TURN") {
		t.Errorf("summariser did not get the old turns")
	}
}

func TestManualCompactionAndCompactCut(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Reply("a1"), llmtest.Reply("a2"), llmtest.Reply("a3")).
		Add("compaction", llmtest.Reply("short summary"))
	h := newHarness(t, s, withConfig(func(c *config.Config) { c.Context.KeepRecent = 2 }))
	res, err := h.sess.Compact(t.Context())
	if err != nil || res.Skipped == "" {
		t.Fatalf("compacting an empty history: %+v, %v", res, err)
	}
	for _, q := range []string{"q1", "q2"} {
		h.sess.Submit(q, messages.ModeAsk)
		h.turn()
	}
	res, err = h.sess.Compact(t.Context())
	if err != nil || res.Err != "" || res.Compacted.Messages != 2 {
		t.Fatalf("compact = %+v, %v", res, err)
	}
	h.sess.Submit("q3", messages.ModeAsk)
	h.turn()
	reqs := h.client.RequestsFor("orchestrator")
	var texts []string
	for _, m := range conversation(reqs[len(reqs)-1]) {
		texts = append(texts, m.Content)
	}
	want := summaryPrefix + "short summary|q2|a2|q3"
	if got := strings.Join(texts, "|"); got != want {
		t.Errorf("history after /compact = %q, want %q", got, want)
	}

	hist := []llm.Message{
		{Role: llm.RoleUser}, {Role: llm.RoleAssistant}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1"}}},
		{Role: llm.RoleTool}, {Role: llm.RoleTool}, {Role: llm.RoleAssistant},
	}
	if got := compactCut(hist, 3); got != 2 {
		t.Errorf("compactCut kept a tool result without its call: cut at %d", got)
	}
	if got := compactCut(hist, 10); got != 0 {
		t.Errorf("compactCut = %d for a short history", got)
	}
}

// While /compact runs the Orchestrator is in its compacting behaviour:
// inputs queue, a queued input can be removed, and Cancel aborts the
// compaction (the history stays as it was) and lets the queue run.
func TestManualCompactionIsABehaviour(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Reply("a1"), llmtest.Reply("a2"), llmtest.Reply("a4")).
		Add("compaction", llmtest.Step{Hold: "summary", Text: "never used"})
	h := newHarness(t, s, withConfig(func(c *config.Config) { c.Context.KeepRecent = 2 }))
	for _, q := range []string{"q1", "q2"} {
		h.sess.Submit(q, messages.ModeAsk)
		h.turn()
	}
	compacted := make(chan *CompactResult, 1)
	go func() {
		res, err := h.sess.Compact(context.Background())
		if err != nil {
			res = &CompactResult{Err: err.Error()}
		}
		compacted <- res
	}()
	if err := h.client.WaitHeld(t.Context(), "summary"); err != nil {
		t.Fatal(err)
	}
	q3 := h.sess.Submit("q3", messages.ModeAsk)
	next[messages.InputQueued](h)
	h.sess.Submit("q4", messages.ModeAsk)
	next[messages.InputQueued](h)
	qs, err := h.sess.Remove(t.Context(), q3.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs.Queued) != 1 || qs.Queued[0].Body != "q4" {
		t.Fatalf("queue after removing q3 = %+v", qs.Queued)
	}
	next[messages.InputRemoved](h)
	h.sess.Cancel("stop compacting")
	res := <-compacted
	if res.Err != "compaction cancelled" {
		t.Fatalf("compact = %+v, want cancelled", res)
	}
	if r := h.turn(); r.Input.Body != "q4" || r.Answer != "a4" {
		t.Fatalf("after the cancelled compaction: %+v", r)
	}
	h.client.Release("summary") // the aborted call's late result changes nothing
	reqs := h.client.RequestsFor("orchestrator")
	var texts []string
	for _, m := range conversation(reqs[len(reqs)-1]) {
		texts = append(texts, m.Content)
	}
	if got, want := strings.Join(texts, "|"), "q1|a1|q2|a2|q4"; got != want {
		t.Errorf("history after a cancelled /compact = %q, want %q", got, want)
	}
}

// Cancel during an auto-compaction inside a turn cancels the turn; the
// Orchestrator leaves the compacting behaviour and takes the next input.
func TestCancelDuringAutoCompaction(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Reply("first answer "+strings.Repeat("dolor ", 300)),
			llmtest.Step{When: "after", Text: "after answer"},
			llmtest.Step{When: "second", Text: "second answer"},
		).
		Add("compaction", llmtest.Step{Hold: "summary", Text: "never used"})
	h := newHarness(t, s, withWindow(4000), withConfig(func(c *config.Config) {
		c.Context.CompactAt = 0.5
		c.Context.KeepRecent = 2
	}))
	h.sess.Submit("OLD "+strings.Repeat("lorem ipsum ", 400), messages.ModeAsk)
	h.turn()
	h.sess.Submit("second question "+strings.Repeat("sit amet ", 200), messages.ModeAsk)
	h.turn()
	h.sess.Submit("third question", messages.ModeAsk)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := h.client.WaitHeld(ctx, "summary"); err != nil {
		t.Fatal(err)
	}
	h.sess.Cancel("changed my mind")
	if r := h.turn(); r.Status != messages.TurnCancelled {
		t.Fatalf("turn = %+v, want cancelled", r)
	}
	h.client.Release("summary")
	h.sess.Submit("after", messages.ModeAsk)
	if r := h.turn(); r.Status == messages.TurnCancelled || r.Input.Body != "after" {
		t.Fatalf("the next input after a cancelled compaction = %+v", r)
	}
}
