package actors

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// The Orchestrator's requests start as every specialist's do: the same
// system message (the preamble the agents of a session share), with the
// Orchestrator's role after the tools, at the head of the first user
// message, counted as context by the ledger. A provider's prefix cache then serves the
// first request of each specialist the system message and leading tools
// the Orchestrator's first request sent.
func TestOrchestratorSharesThePrefix(t *testing.T) {
	s := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(delegation("search", "x", "find x")), llmtest.Reply("done")).
		Add("search", searchReport("found"))
	h := newHarness(t, s)
	h.sess.Submit("where is x?", messages.ModeEdit)
	if r := h.turn(); r.Answer != "done" {
		t.Fatalf("turn = %+v; unused %v", r, h.client.Unused())
	}
	orch, search := h.client.RequestsFor("orchestrator")[0], h.client.RequestsFor("search")[0]
	if orch.Messages[0].Role != llm.RoleSystem || search.Messages[0].Role != llm.RoleSystem || orch.Messages[0].Content != search.Messages[0].Content {
		t.Fatalf("the system messages differ:\norchestrator: %.300q\nsearch:       %.300q", orch.Messages[0].Content, search.Messages[0].Content)
	}
	if sys := orch.Messages[0].Content; strings.Contains(sys, "You are the Orchestrator") || strings.Contains(sys, "Search specialist") {
		t.Errorf("the shared system message names a role:\n%s", sys)
	}
	first := orch.Messages[1]
	role, request, ok := strings.Cut(first.Content, conversationHeading)
	if len(orch.Messages) != 2 || first.Role != llm.RoleUser || !ok || !regexp.MustCompile(`^# Your role\nDate: \d{4}-\d\d-\d\d\.\nYou are the Orchestrator`).MatchString(role) || !strings.Contains(role, "# Mode: edit") || request != "where is x?" {
		t.Errorf("the Orchestrator's first user message = %+v", first)
	}
	// The ledger counts the role as context, not as the user's input.
	parts := llm.Ledger(orch, llm.Usage{})
	if parts[3].Part != llm.PartContext || parts[3].Tokens < llm.EstimateTokens(role) {
		t.Errorf("ledger = %+v: the role is not counted as context", parts)
	}
	// A conversation that does not open with a user message gets the
	// role as a message of its own.
	if got := orchestratorMessages("pre\n# Your role\nR\n", []llm.Message{{Role: llm.RoleAssistant, Content: "a"}}); len(got) != 3 || got[1].Role != llm.RoleUser || got[1].Content != "# Your role\nR\n" {
		t.Errorf("role before an assistant message: %+v", got)
	}
}

// The built-in tool order makes the lists of the Orchestrator and of the
// specialists start alike: every built-in agent that has LS … RepoMap
// has them first, as the Orchestrator does, byte for byte, and Code
// shares the Orchestrator's Think and writers after them.
func TestOrchestratorAndSpecialistsShareLeadingTools(t *testing.T) {
	all := cliTools(t)
	r, err := LoadRoster(RosterOptions{ToolNames: all.Names()})
	if err != nil {
		t.Fatal(err)
	}
	orch := FilterTools(all, nil, messages.ModeEdit, false).Defs()
	shared := func(a []llm.ToolDef) int {
		n := 0
		for n < len(a) && n < len(orch) && a[n].Name == orch[n].Name && a[n].Description == orch[n].Description && bytes.Equal(a[n].Parameters, orch[n].Parameters) {
			n++
		}
		return n
	}
	for name, want := range map[string]int{"code": 9, "review": 6, "qa": 6, "search": 5, "init": 5} {
		def, ok := r.Get(name)
		if !ok {
			t.Fatalf("no %s agent", name)
		}
		defs := AgentTools(all, r, def, messages.ModeEdit).Defs()
		if n := shared(defs); n < want {
			t.Errorf("%s shares its first %d tools with the Orchestrator, want %d:\n%s\n%s", name, n, want, toolList(defs), toolList(orch))
		}
	}
}

func toolList(defs []llm.ToolDef) string {
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// --append-system-prompt is the system message's: it follows the shared
// preamble there, not the role in the first user message.
func TestAppendSystemStaysInTheSystemMessage(t *testing.T) {
	s := llmtest.NewScript().Add("orchestrator", llmtest.Reply("done"))
	h := newHarness(t, s, func(d *Deps) { d.AppendSystem = "Always answer in French." })
	h.sess.Submit("hi", messages.ModeEdit)
	if r := h.turn(); r.Answer != "done" {
		t.Fatalf("turn = %+v", r)
	}
	req := h.client.RequestsFor("orchestrator")[0]
	sys, first := req.Messages[0].Content, req.Messages[1].Content
	if !strings.HasSuffix(sys, "\nAlways answer in French.\n") || !strings.Contains(sys, "# Environment") {
		t.Errorf("system message = %q", sys)
	}
	if strings.Contains(first, "French") || !strings.HasPrefix(first, "# Your role\n") || !strings.HasSuffix(first, conversationHeading+"hi") {
		t.Errorf("first user message = %q", first)
	}
}
