package llmtest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

func newClient(t *testing.T, s *llmtest.Script) *llmtest.Client {
	t.Helper()
	c, err := llmtest.NewClient(s, map[string]string{"root": "/p"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestClientPlaysTheScript(t *testing.T) {
	c := newClient(t, llmtest.NewScript().
		Add("orchestrator",
			llmtest.Step{Reasoning: "look", Text: "Listing {{root}}", ToolCalls: []llmtest.ToolCall{llmtest.Call("LS", map[string]string{"path": "{{root}}"})}},
			llmtest.Step{When: "a.go", Text: "Found a.go", Usage: &llm.Usage{PromptTokens: 100, CompletionTokens: 7}},
		))
	var evs []llm.Event
	req := llm.Request{Model: "m", Agent: "orchestrator", Messages: []llm.Message{user("list")}}
	got, err := c.Stream(t.Context(), req, func(e llm.Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{
		Model: "m", Text: "Listing /p", Reasoning: "look",
		ToolCalls:    []llm.ToolCall{{ID: "call_orchestrator_0_0", Name: "LS", Arguments: `{"path":"/p"}`}},
		FinishReason: llm.FinishToolCalls,
		// Estimated: prompt "list" 1+4; output text 3, reasoning 1, name 1, arguments 4.
		Usage:         llm.Usage{PromptTokens: 5, CompletionTokens: 9, TotalTokens: 14},
		UsageReported: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	var text, reasoning string
	var calls []string
	for _, e := range evs {
		switch e.Kind {
		case llm.EventText:
			text += e.Text
		case llm.EventReasoning:
			reasoning += e.Text
		case llm.EventToolCall:
			calls = append(calls, e.ToolCall.Name)
		}
	}
	if text != got.Text || reasoning != got.Reasoning || len(calls) != 1 {
		t.Errorf("events: text %q reasoning %q calls %v", text, reasoning, calls)
	}

	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: got.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_orchestrator_0_0", Content: "a.go\nb.go"})
	got, err = c.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "Found a.go" || got.FinishReason != llm.FinishStop || got.Usage.TotalTokens != 107 {
		t.Errorf("second turn = %+v", got)
	}
	if n := len(c.RequestsFor("orchestrator")); n != 2 {
		t.Errorf("recorded %d requests", n)
	}
	if u := c.Unused(); len(u) != 0 {
		t.Errorf("unused: %v", u)
	}
}

func TestClientFaults(t *testing.T) {
	tests := []struct {
		name string
		step llmtest.Step
		kind llm.ErrorKind
	}{
		{"rate limit", llmtest.Step{Status: 429, RetryAfter: "2"}, llm.KindRateLimit},
		{"server", llmtest.Step{Status: 500}, llm.KindServer},
		{"auth", llmtest.Step{Status: 401}, llm.KindAuth},
		{"context length", llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: "too long", Code: "context_length_exceeded"}}, llm.KindContextLength},
		{"cut", llmtest.Step{Text: "x", CutAfter: 1}, llm.KindNetwork},
		{"error mid-stream", llmtest.Step{Text: "x", ErrorMidstream: true}, llm.KindServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, llmtest.NewScript().Add("a", tt.step))
			_, err := c.Stream(t.Context(), llm.Request{Agent: "a", Messages: []llm.Message{user("x")}}, nil)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tt.kind {
				t.Fatalf("err = %v, want kind %s", err, tt.kind)
			}
			if tt.step.RetryAfter != "" && e.RetryAfter != 2*time.Second {
				t.Errorf("RetryAfter = %v", e.RetryAfter)
			}
		})
	}
	c := newClient(t, llmtest.NewScript())
	_, err := c.Stream(t.Context(), llm.Request{Agent: "qa", Messages: []llm.Message{user("anything left?")}}, nil)
	if err == nil || !strings.Contains(err.Error(), `agent \"qa\"`) && !strings.Contains(err.Error(), `agent "qa"`) {
		t.Errorf("exhausted: err = %v, want it to name the agent", err)
	}
}

func TestClientHoldCancelAndConcurrency(t *testing.T) {
	c := newClient(t, llmtest.NewScript().Add("a",
		llmtest.Step{Text: "one", Hold: "h"}, llmtest.Step{Text: "two", Hold: "h"}, llmtest.Step{Text: "three", Hold: "cancel-me"}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := c.Stream(context.Background(), llm.Request{Agent: "a", Messages: []llm.Message{user("x")}}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	if err := c.WaitHeld(t.Context(), "h"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both calls to start", func() bool { return len(c.Requests()) == 2 })
	c.Release("h")
	wg.Wait()
	if c.MaxInFlight() != 2 {
		t.Errorf("MaxInFlight = %d, want 2", c.MaxInFlight())
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, llm.Request{Agent: "a", Messages: []llm.Message{user("x")}}, nil)
		done <- err
	}()
	if err := c.WaitHeld(t.Context(), "cancel-me"); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := <-done
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want canceled", err)
	}
}

func TestNewClientRejectsUndefinedVars(t *testing.T) {
	if _, err := llmtest.NewClient(llmtest.NewScript().Add("a", llmtest.Reply("{{nope}}")), nil); err == nil {
		t.Fatal("want an error for {{nope}}")
	}
}
