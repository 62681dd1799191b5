package actors

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// A tool offered on demand is listed in LoadTools instead of sent: once
// the agent loads it, its definition comes last in the next requests (the
// definitions before it unchanged, for the prefix cache), and it runs.
func TestOnDemandToolIsSentOnceLoaded(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("scout", "x", "echo hi")), llmtest.Reply("done")).
		Add("scout",
			llmtest.Calls(llmtest.Call(NameLoadTools, map[string]any{"names": []string{"Echo"}})),
			llmtest.Step{When: "Loaded Echo", ToolCalls: []llmtest.ToolCall{llmtest.Call("Echo", map[string]any{"text": "hi"})}},
			llmtest.Step{When: "echo: hi", ToolCalls: report(map[string]any{"summary": "echoed", "details": ""}).ToolCalls},
		)
	h := newHarness(t, s, withConfig(func(c *config.Config) {
		c.Agents = map[string]config.Agent{"scout": {Description: "echoes", Prompt: "Echo.", Tools: []string{"LS", "Echo"}}}
	}), func(d *Deps) {
		r, err := LoadRoster(RosterOptions{Config: d.Config, ToolNames: d.Tools.Names()})
		if err != nil {
			t.Fatal(err)
		}
		def, _ := r.Get("scout")
		def.OnDemand = []string{"Echo"}
		d.Roster = r
	})
	h.sess.Submit("echo", messages.ModeEdit)
	if r := h.turn(); r.Answer != "done" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	reqs := h.client.RequestsFor("scout")
	if len(reqs) != 3 {
		t.Fatalf("scout sent %d requests, want 3; unused %v", len(reqs), h.client.Unused())
	}
	first := reqs[0].Tools
	if got, want := toolList(first), "LS, LoadTools, Report"; got != want {
		t.Errorf("first request's tools = %s, want %s", got, want)
	}
	if i := slices.IndexFunc(first, func(d llm.ToolDef) bool { return d.Name == NameLoadTools }); i < 0 || !strings.Contains(first[i].Description, "- Echo: echo text") {
		t.Errorf("LoadTools does not list Echo: %+v", first)
	}
	for i, r := range reqs[1:] {
		if diff := cmp.Diff(first, r.Tools[:len(first)]); diff != "" {
			t.Errorf("request %d changed the definitions sent before (-first +now):\n%s", i+1, diff)
		}
		if got := r.Tools[len(r.Tools)-1].Name; len(r.Tools) != len(first)+1 || got != "Echo" {
			t.Errorf("request %d's tools = %s, want Echo added last", i+1, toolList(r.Tools))
		}
	}
}

// LoadTools refuses a name that is not on demand for the agent, and an
// on-demand tool the agent calls without loading it still runs.
func TestOnDemandHelpers(t *testing.T) {
	set := testTools()
	load, ok := loadToolsTool(set, []string{"Echo", "NoSuchTool"})
	if !ok {
		t.Fatal("no LoadTools for a set with Echo")
	}
	res, err := load.Run(t.Context(), nil, []byte(`{"names":["Write"]}`))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "those are Echo") {
		t.Errorf("loading a tool that is not on demand = %+v, %v", res, err)
	}
	if _, ok := loadToolsTool(set, []string{"NoSuchTool"}); ok {
		t.Error("LoadTools offered with nothing to load")
	}
	set = set.With(load)
	hist := []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
		{Name: NameLoadTools, Arguments: `{"names":["Echo"]}`}, {Name: NameLoadTools, Arguments: `not json`}}}}
	if got := toolList(offeredDefs(set, []string{"Echo"}, nil)); strings.Contains(got, "Echo,") || !strings.Contains(got, NameLoadTools) {
		t.Errorf("before loading: %s", got)
	}
	if got := toolList(offeredDefs(set, []string{"Echo"}, hist)); !strings.HasSuffix(got, ", Echo") || strings.Count(got, "Echo") != 1 {
		t.Errorf("after loading: %s", got)
	}
	if got := firstClause("Reads a file (numbered: like cat -n). Then more."); got != "Reads a file (numbered: like cat -n)" {
		t.Errorf("firstClause = %q", got)
	}
}

// The Orchestrator's RequestReview is on demand: its first request lists
// it in LoadTools instead of sending it, and once loaded its definition
// comes last and a call to it still adds the gates to a change the rules
// would not gate (one file, no public API).
func TestOrchestratorRequestReviewOnDemand(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("Write", map[string]string{"path": "{{root}}/a.txt", "content": "hello\n"})),
			llmtest.Step{When: "wrote", ToolCalls: []llmtest.ToolCall{llmtest.Call(NameLoadTools, map[string]any{"names": []string{reviewToolName}})}},
			llmtest.Step{When: "Loaded " + reviewToolName, ToolCalls: []llmtest.ToolCall{llmtest.Call(reviewToolName, map[string]any{"reason": "subtle"})}},
			llmtest.Reply("done"),
		).
		Add("review", report(map[string]any{"files_reviewed": []string{"a.txt"}, "issues": []any{}, "overall_score": 9, "summary": "fine", "approved": true}))
	h := newHarness(t, s)
	h.sess.Submit("write a file", messages.ModeEdit)
	h.turn()
	reqs := h.client.RequestsFor("orchestrator")
	if len(reqs) < 4 {
		t.Fatalf("%d Orchestrator requests, want at least 4; unused %v", len(reqs), h.client.Unused())
	}
	first := reqs[0].Tools
	i := slices.IndexFunc(first, func(d llm.ToolDef) bool { return d.Name == NameLoadTools })
	if slices.Contains(toolNames(reqs[0]), reviewToolName) || i < 0 || !strings.Contains(first[i].Description, "- "+reviewToolName+": ") {
		t.Errorf("the first request sends %s or does not list it in LoadTools: %s", reviewToolName, toolList(first))
	}
	loaded := reqs[2].Tools
	if got := loaded[len(loaded)-1].Name; got != reviewToolName || len(loaded) != len(first)+1 {
		t.Errorf("after loading, the tools are %s, want %s added last", toolList(loaded), reviewToolName)
	}
	if n := len(h.client.RequestsFor("review")); n != 1 {
		t.Errorf("%d review requests after RequestReview, want 1", n)
	}
}
