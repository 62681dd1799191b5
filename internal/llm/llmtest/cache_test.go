package llmtest_test

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// WithPromptCache reports as cached the part of a prompt an earlier prompt
// of the run started with, in whole 128-token blocks from 1024
// tokens on; a prompt that differs from the start gets nothing.
func TestPromptCache(t *testing.T) {
	script := llmtest.NewScript().Add("a", llmtest.Reply("one"), llmtest.Reply("two"), llmtest.Reply("three"))
	srv := llmtest.NewServer(t, script, llmtest.WithPromptCache())
	c := adapter(t, srv)
	system := llm.Message{Role: llm.RoleSystem, Content: strings.Repeat("stable rules. ", 800)} // ~2800 tokens
	stream := func(msgs ...llm.Message) llm.Usage {
		t.Helper()
		r, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "a", Messages: msgs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Usage
	}
	if u := stream(system, user("first")); u.CachedTokens != 0 {
		t.Errorf("first request: cached = %d, want 0", u.CachedTokens)
	}
	u := stream(system, user("first"), llm.Message{Role: llm.RoleAssistant, Content: "one"}, user("second"))
	if u.CachedTokens < 2048 || u.CachedTokens%128 != 0 || u.CachedTokens > u.PromptTokens {
		t.Errorf("same prefix: cached = %d of %d, want most of it in 128-token blocks", u.CachedTokens, u.PromptTokens)
	}
	changed := llm.Message{Role: llm.RoleSystem, Content: "Date: tomorrow. " + system.Content}
	if u := stream(changed, user("first")); u.CachedTokens != 0 {
		t.Errorf("changed start: cached = %d, want 0", u.CachedTokens)
	}
}

// A provider caches per account: the prefix one agent sent serves another
// agent's request that starts with the same bytes (the shared specialist
// preamble), and tools sent in another order part the prompts there.
func TestPromptCacheAcrossAgents(t *testing.T) {
	const cacheBlock = 128
	script := llmtest.NewScript().Add("a", llmtest.Reply("one")).Add("b", llmtest.Reply("two"), llmtest.Reply("three"), llmtest.Reply("four"))
	srv := llmtest.NewServer(t, script, llmtest.WithPromptCache())
	c := adapter(t, srv)
	system := llm.Message{Role: llm.RoleSystem, Content: strings.Repeat("shared preamble. ", 600)} // ~2550 tokens
	t1 := llm.ToolDef{Name: "ReadFile", Description: "reads", Parameters: []byte(`{"type":"object"}`)}
	t2 := llm.ToolDef{Name: "Grep", Description: "searches", Parameters: []byte(`{"type":"object"}`)}
	stream := func(agent string, tools []llm.ToolDef, msgs ...llm.Message) llm.Usage {
		t.Helper()
		r, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: agent, Messages: msgs, Tools: tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Usage
	}
	stream("a", []llm.ToolDef{t1, t2}, system, user("task of a"))
	u := stream("b", []llm.ToolDef{t1, t2}, system, user("task of b"))
	if u.CachedTokens < 2048 || u.CachedTokens%128 != 0 {
		t.Errorf("another agent, same preamble: cached = %d of %d, want the preamble in 128-token blocks", u.CachedTokens, u.PromptTokens)
	}
	// The system text comes first in the layout, so the tools' order
	// costs only what follows it.
	long := llm.ToolDef{Name: "Long", Description: strings.Repeat("a long description. ", 400), Parameters: []byte(`{"type":"object"}`)}
	stream("b", []llm.ToolDef{long, t1}, system, user("x"))
	sys := llm.EstimateMessages([]llm.Message{system})
	if u := stream("b", []llm.ToolDef{t1, long}, system, user("x")); u.CachedTokens > sys+cacheBlock || u.CachedTokens < sys-cacheBlock {
		t.Errorf("tools reordered: cached = %d of %d, want about the system prompt only", u.CachedTokens, u.PromptTokens)
	}
}

// A cached prefix is a model's own: the same bytes sent to another model
// (the small model of Search and QA, the main model of Code) find nothing.
func TestPromptCacheIsPerModel(t *testing.T) {
	script := llmtest.NewScript().Add("a", llmtest.Reply("one")).Add("b", llmtest.Reply("two"), llmtest.Reply("three"))
	srv := llmtest.NewServer(t, script, llmtest.WithPromptCache())
	c := adapter(t, srv)
	system := llm.Message{Role: llm.RoleSystem, Content: strings.Repeat("shared preamble. ", 600)}
	stream := func(agent, model string) llm.Usage {
		t.Helper()
		r, err := c.Stream(t.Context(), llm.Request{Model: model, Agent: agent, Messages: []llm.Message{system, user("task")}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r.Usage
	}
	stream("a", "small")
	if u := stream("b", "main"); u.CachedTokens != 0 {
		t.Errorf("another model, same prompt: cached = %d, want 0", u.CachedTokens)
	}
	if u := stream("b", "small"); u.CachedTokens < 2048 {
		t.Errorf("the same model again: cached = %d, want the preamble", u.CachedTokens)
	}
}

// A step's `when` is matched against the conversation, not the role the
// Orchestrator's first user message opens with: a word of the role
// ("first") must not take a step meant for another turn.
func TestWhenSkipsTheOrchestratorsRole(t *testing.T) {
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first", Text: "wrong step"},
		llmtest.Step{When: "hello", Text: "right step"})
	srv := llmtest.NewServer(t, script)
	c := adapter(t, srv)
	msg := user("# Your role\nRead files first.\n# Conversation\nhello")
	r, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: "orchestrator", Messages: []llm.Message{msg}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "right step" {
		t.Errorf("answer %q, want the step whose when the conversation says", r.Text)
	}
}
