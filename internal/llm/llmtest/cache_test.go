package llmtest_test

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// WithPromptCache reports as cached the part of a prompt an earlier prompt
// of the same agent started with, in whole 128-token blocks from 1024
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
