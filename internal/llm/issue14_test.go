package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestStreamsOdinGotWrong drives the adapter over HTTP through the
// scripted server's fixtures for the stream shapes of issue #14, one per
// case, asserting the response a correct client builds.
func TestStreamsOdinGotWrong(t *testing.T) {
	usage := &llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	ls := func(id, path string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "LS", Arguments: llmtest.Args(map[string]string{"path": path})}
	}
	tests := []struct {
		name  string
		steps []llmtest.Step
		want  llm.Response
		// wantText is what the text events spell, when not want.Text.
		wantText string
		// check inspects calls whose ids are made up locally.
		check func(t *testing.T, got *llm.Response)
	}{
		{
			name:     "refusal field is the answer, streamed as text",
			steps:    []llmtest.Step{{Refusal: "I can't help with that request.", Usage: usage}},
			want:     llm.Response{Text: "I can't help with that request.", Refusal: "I can't help with that request.", FinishReason: llm.FinishStop, Usage: *usage, UsageReported: true},
			wantText: "I can't help with that request.",
		},
		{
			name: "vLLM error object mid-stream, then [DONE], is retried",
			steps: []llmtest.Step{
				{Text: "Partial answer that must not survive", CutAfter: 3, ErrorMidstream: true, ErrorFormat: "object",
					Error: &llmtest.ErrorBody{Message: "CUDA out of memory", Type: "InternalServerError"}},
				{Text: "The real answer.", Usage: usage},
			},
			want: llm.Response{Text: "The real answer.", FinishReason: llm.FinishStop, Usage: *usage, UsageReported: true},
		},
		{
			name:  "legacy function_call deltas become a tool call",
			steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{ls("", "cmd")}, Quirks: llmtest.Quirks{LegacyFunctionCall: true}, Usage: usage}},
			check: func(t *testing.T, got *llm.Response) {
				if len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "LS" || got.ToolCalls[0].Arguments != `{"path":"cmd"}` || got.ToolCalls[0].ID == "" {
					t.Errorf("calls = %+v, want one LS {\"path\":\"cmd\"} with an id", got.ToolCalls)
				}
				if got.FinishReason != llm.FinishToolCalls {
					t.Errorf("finish = %q, want tool_calls", got.FinishReason)
				}
			},
		},
		{
			name:  "relay reuses index 0 for a second call, with ids",
			steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{ls("call_a", "a"), ls("call_b", "b")}, Quirks: llmtest.Quirks{ReuseIndex: true}, Usage: usage}},
			want: llm.Response{ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "LS", Arguments: `{"path":"a"}`},
				{ID: "call_b", Name: "LS", Arguments: `{"path":"b"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: *usage, UsageReported: true},
		},
		{
			name:  "relay reuses index 0 for a second call, without ids",
			steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{ls("", "a"), {Name: "Glob", Arguments: llmtest.Args(map[string]string{"pattern": "*.go"})}}, Quirks: llmtest.Quirks{ReuseIndex: true, NoCallID: true}, Usage: usage}},
			check: func(t *testing.T, got *llm.Response) {
				var shape []string
				for _, c := range got.ToolCalls {
					shape = append(shape, c.Name+" "+c.Arguments)
				}
				if diff := cmp.Diff([]string{`LS {"path":"a"}`, `Glob {"pattern":"*.go"}`}, shape); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				if len(got.ToolCalls) == 2 && got.ToolCalls[0].ID == got.ToolCalls[1].ID {
					t.Errorf("both calls have id %q", got.ToolCalls[0].ID)
				}
			},
		},
		{
			name:  "continuation fragments under another index",
			steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{ls("call_a", "internal/llm"), ls("call_b", "cmd/odin")}, Quirks: llmtest.Quirks{ContinuationOtherIndex: true}, Usage: usage}},
			want: llm.Response{ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "LS", Arguments: `{"path":"internal/llm"}`},
				{ID: "call_b", Name: "LS", Arguments: `{"path":"cmd/odin"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: *usage, UsageReported: true},
		},
		{
			name: "thought_signature on a call is kept as the call's extra fields",
			steps: []llmtest.Step{{ToolCalls: []llmtest.ToolCall{{ID: "call_g", Name: "LS", Arguments: llmtest.Args(map[string]string{"path": "."}),
				Extra: map[string]any{"extra_content": map[string]any{"google": map[string]any{"thought_signature": "c2lnLTE="}}}}}, Usage: usage}},
			want: llm.Response{ToolCalls: []llm.ToolCall{
				{ID: "call_g", Name: "LS", Arguments: `{"path":"."}`, Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"c2lnLTE="}}}`)},
			}, FinishReason: llm.FinishToolCalls, Usage: *usage, UsageReported: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", tt.steps...))
			c, _ := newAdapter(t, srv.URL())
			var ev events
			got, err := c.Stream(t.Context(), userRequest("hi"), ev.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if tt.check != nil {
				tt.check(t, got)
				return
			}
			tt.want.Model = "test-model"
			if diff := cmp.Diff(&tt.want, got, ignoreLedger); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			wantText := tt.want.Text
			if tt.wantText != "" {
				wantText = tt.wantText
			}
			if s := ev.textSince(llm.EventText); s != wantText {
				t.Errorf("text events = %q, want %q", s, wantText)
			}
		})
	}
}

// TestMidstreamErrorObjectExhaustsRetries: the vLLM error shape is an
// error, never a (truncated) answer, also when retries run out.
func TestMidstreamErrorObjectExhaustsRetries(t *testing.T) {
	step := llmtest.Step{Text: "Half an answer", CutAfter: 2, ErrorMidstream: true, ErrorFormat: "object",
		Error: &llmtest.ErrorBody{Message: "engine died", Type: "InternalServerError"}}
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", step, step))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxRetries = 1 })
	_, err := c.Stream(t.Context(), userRequest("hi"), nil)
	e := asError(t, err)
	if e.Kind != llm.KindServer || e.Attempts != 2 || !strings.Contains(e.Message, "engine died") {
		t.Errorf("err = %v (kind %s, attempts %d), want a server error naming the message after 2 attempts", e, e.Kind, e.Attempts)
	}
}

// TestThoughtSignatureEchoed: the extra fields of a call go back on the
// assistant message of the next request; the scripted server, like Gemini,
// rejects a replay without them.
func TestThoughtSignatureEchoed(t *testing.T) {
	sig := map[string]any{"extra_content": map[string]any{"google": map[string]any{"thought_signature": "c2lnLTI="}}}
	script := llmtest.NewScript().Add("default",
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "call_s", Name: "LS", Arguments: llmtest.Args(map[string]string{"path": "."}), Extra: sig}}},
		llmtest.Reply("Listed."),
		llmtest.Reply("unused"),
	)
	srv := llmtest.NewServer(t, script)
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxRetries = -1 })
	first, err := c.Stream(t.Context(), userRequest("list"), nil)
	if err != nil {
		t.Fatal(err)
	}
	history := func(calls []llm.ToolCall) llm.Request {
		req := userRequest("list")
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: calls},
			llm.Message{Role: llm.RoleTool, ToolCallID: "call_s", Content: "a.go"})
		return req
	}
	// Without the extra fields the strict server refuses the follow-up.
	stripped := append([]llm.ToolCall(nil), first.ToolCalls...)
	stripped[0].Extra = nil
	if _, err := c.Stream(t.Context(), history(stripped), nil); asError(t, err).Kind != llm.KindBadRequest {
		t.Fatalf("replay without the signature: err = %v, want bad_request", err)
	}
	got, err := c.Stream(t.Context(), history(first.ToolCalls), nil)
	if err != nil {
		t.Fatalf("replay with the signature: %v", err)
	}
	if got.Text != "Listed." {
		t.Errorf("text = %q", got.Text)
	}
	reqs := srv.Requests()
	if raw := string(reqs[len(reqs)-1].Raw); !strings.Contains(raw, `"thought_signature":"c2lnLTI="`) {
		t.Errorf("last request does not carry the signature: %s", raw)
	}
}

// TestIdleTimeout: a stream that stalls fails after the idle timeout, not
// the request timeout, and says which key changes it.
func TestIdleTimeout(t *testing.T) {
	step := llmtest.Step{Text: "This answer stalls half way through", StallAfter: 3}
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", step, step))
	c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
		o.MaxRetries = 1
		o.IdleTimeout = 200 * time.Millisecond
		o.Timeout = time.Hour
		o.Provider = "local"
	})
	var ev events
	_, err := c.Stream(t.Context(), userRequest("hi"), ev.add)
	e := asError(t, err)
	if e.Kind != llm.KindTimeout || e.Attempts != 2 {
		t.Fatalf("err = %v (kind %s, attempts %d), want a timeout after 2 attempts", e, e.Kind, e.Attempts)
	}
	if !strings.Contains(e.Message, "providers.local.idle_timeout") || !strings.Contains(e.Message, "200ms") {
		t.Errorf("message %q does not name the idle timeout and its key", e.Message)
	}
	if n := len(ev.kinds(llm.EventRetry)); n != 1 || len(sl.waits()) != 1 {
		t.Errorf("%d retry events, %d waits; want 1 each", n, len(sl.waits()))
	}
}

// TestBudget: the overall budget ends a call whose every attempt stalls,
// without waiting for the retries to run out.
func TestBudget(t *testing.T) {
	step := llmtest.Step{Text: "stalls", StallAfter: 1}
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", step, step, step))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
		o.MaxRetries = 10
		o.IdleTimeout = -1
		o.Timeout = time.Hour
		o.Budget = 300 * time.Millisecond
		o.Provider = "local"
	})
	_, err := c.Stream(t.Context(), userRequest("hi"), nil)
	e := asError(t, err)
	if e.Kind != llm.KindBudget || e.Retryable() {
		t.Fatalf("err = %v (kind %s), want a budget error that is not retryable", e, e.Kind)
	}
	if !strings.Contains(e.Message, "providers.local.budget") {
		t.Errorf("message %q does not name the budget key", e.Message)
	}
}

// TestContextLengthClassified: the wordings of a prompt that does not fit
// are their own kind and are never retried as is.
func TestContextLengthClassified(t *testing.T) {
	for _, msg := range []string{
		"This model's maximum context length is 128000 tokens.",
		"prompt is too long: 210000 tokens > 200000 maximum",
		"Input is too long for requested model.",
	} {
		t.Run(msg, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default",
				llmtest.Step{Status: 400, Error: &llmtest.ErrorBody{Message: msg, Type: "invalid_request_error"}}))
			c, _ := newAdapter(t, srv.URL())
			_, err := c.Stream(t.Context(), userRequest("hi"), nil)
			if e := asError(t, err); e.Kind != llm.KindContextLength || e.Attempts != 1 {
				t.Errorf("err = %v (kind %s, attempts %d), want context_length after 1 attempt", e, e.Kind, e.Attempts)
			}
		})
	}
}
