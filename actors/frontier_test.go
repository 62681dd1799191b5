package actors

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

func withTodoWrite() harnessOpt {
	return func(d *Deps) { d.Tools = d.Tools.With(tools.WithRecover(tools.NewTodoWrite())) }
}

func plan(items ...tools.TodoItem) llmtest.ToolCall {
	return llmtest.Call("TodoWrite", tools.TodoWriteInput{Todos: items})
}

// A compaction in the middle of a multi-step task: the summariser forgets
// the plan, but the request after it carries the frontier Odin wrote
// before compacting, verbatim, after the summary.
func TestFrontierSurvivesCompaction(t *testing.T) {
	bulk := strings.Repeat("lorem ipsum ", 300)
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(plan(
				tools.TodoItem{ID: "1", Content: "write the parser", Status: "completed"},
				tools.TodoItem{ID: "2", Content: "write the parser tests", Status: "in_progress",
					Acceptance: []messages.AcceptanceCriterion{{Criterion: "tests pass", Command: "go test ./parse"}}},
				tools.TodoItem{ID: "3", Content: "document the grammar", Status: "pending"},
			)),
			llmtest.Calls(llmtest.Call("Echo", map[string]string{"text": "read the grammar " + bulk})),
			llmtest.Calls(plan(
				tools.TodoItem{ID: "1", Content: "write the parser", Status: "completed"},
				tools.TodoItem{ID: "2", Content: "write the parser tests", Status: "completed"},
				tools.TodoItem{ID: "3", Content: "document the grammar", Status: "completed"},
			)),
			llmtest.Reply("all three steps are done"),
		).
		Add("compaction", llmtest.Reply("SUMMARY: the user wants a parser; some files were read."),
			llmtest.Reply("SUMMARY again"), llmtest.Reply("SUMMARY once more"))
	h := newHarness(t, s, withTodoWrite(), withWindow(8000), withConfig(func(c *config.Config) {
		c.Context.CompactAt = 0.5
		c.Context.KeepRecent = 2
	}))
	h.sess.Submit("build the expression parser "+strings.Repeat("with care ", 100), messages.ModeEdit)
	ev, _ := next[messages.Compacted](h)
	if ev.Messages == 0 {
		t.Fatalf("compacted = %+v", ev)
	}
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "all three steps are done" {
		t.Fatalf("turn: %s %s %q; unused %v", r.Status, shorten(r.Error, 300), r.Answer, h.client.Unused())
	}
	want := frontierHeader + "\nGoal: build the expression parser with care" // the goal, folded to one line
	wantTail := "\nAcceptance criteria:\n- tests pass (`go test ./parse`) — for: write the parser tests\n" +
		"Done:\n- write the parser\n" +
		"Remaining:\n- write the parser tests (in progress)\n- document the grammar\n" +
		"Next step: write the parser tests\n" +
		"Evidence from the quality gates:\n- (none)"
	reqs := h.client.RequestsFor("orchestrator")
	var after int
	for i, req := range reqs {
		if strings.HasPrefix(conversation(req)[0].Content, summaryPrefix) {
			after = i
			break
		}
	}
	if after == 0 {
		t.Fatalf("no request after the compaction starts with the summary")
	}
	first := conversation(reqs[after])[0].Content
	if !strings.Contains(first, "SUMMARY: the user wants a parser") {
		t.Errorf("summary missing: %q", shorten(first, 300))
	}
	i := strings.Index(first, want)
	if i < 0 || !strings.HasSuffix(first, wantTail) {
		t.Fatalf("the frontier is not in the first request after compaction verbatim:\n%s", first)
	}
	// Compaction dropped the old reads but not the plan's state.
	if strings.Contains(first, "read the grammar") {
		t.Errorf("compacted history was still sent")
	}
}

// The gate on the final answer: "done" is refused while the plan has
// remaining items; when the model then completes the plan the turn ends
// done, and when it insists, the turn ends as a failed gate naming them.
func TestGateRefusesDoneWithRemainingItems(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(plan(
				tools.TodoItem{ID: "1", Content: "add Max", Status: "completed"},
				tools.TodoItem{ID: "2", Content: "add Min", Status: "pending"},
			)),
			llmtest.Reply("done"),
			llmtest.Step{When: frontierRefusalPrefix, ToolCalls: []llmtest.ToolCall{plan(
				tools.TodoItem{ID: "1", Content: "add Max", Status: "completed"},
				tools.TodoItem{ID: "2", Content: "add Min", Status: "completed"},
			)}},
			llmtest.Reply("now really done"),
			// The second turn: the model claims done three times.
			llmtest.Calls(plan(tools.TodoItem{ID: "1", Content: "port the CLI", Status: "in_progress"})),
			llmtest.Reply("done"), llmtest.Reply("done!"), llmtest.Reply("done!!"),
		)
	h := newHarness(t, s, withTodoWrite())
	h.sess.Submit("add Max and Min", messages.ModeEdit)
	r := h.turn()
	if r.Status != messages.TurnDone || r.Answer != "now really done" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	reqs := h.client.RequestsFor("orchestrator")
	refusal := reqs[2].Messages[len(reqs[2].Messages)-1].Content
	if !strings.HasPrefix(refusal, frontierRefusalPrefix) || !strings.Contains(refusal, "- add Min\n") || strings.Contains(refusal, "add Max") {
		t.Errorf("refusal = %q", refusal)
	}

	h.sess.Submit("port the CLI", messages.ModeEdit)
	r = h.turn()
	if r.Status != messages.TurnGateFailed || !strings.Contains(r.Error, "port the CLI (in progress)") {
		t.Fatalf("a turn that insists on done with open items = %+v", r)
	}
	if n := len(h.client.RequestsFor("orchestrator")); n != 8 {
		t.Errorf("requests = %d, want 8 (two refusals, then the turn ends)", n)
	}
	if u := h.client.Unused(); len(u) != 0 {
		t.Errorf("unused steps: %v", u)
	}
}

// Ask and plan mode turns keep a plan for later: their items are meant to
// remain, so nothing is refused.
func TestPlanModeTodosAreNotRefused(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator",
		llmtest.Calls(plan(tools.TodoItem{ID: "1", Content: "later", Status: "pending"})),
		llmtest.Reply("here is the plan"))
	h := newHarness(t, s, withTodoWrite())
	h.sess.Submit("plan it", messages.ModeAsk)
	if r := h.turn(); r.Status != messages.TurnDone || r.Answer != "here is the plan" {
		t.Fatalf("turn = %+v", r)
	}
}
