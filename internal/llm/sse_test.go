package llm_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
)

// TestSSEFixtures feeds raw response bodies (the project's own fixtures,
// each reproducing one provider's shape) through the adapter, pinning the
// wire handling independently of the scripted server.
func TestSSEFixtures(t *testing.T) {
	tests := []struct {
		file    string
		want    *llm.Response
		wantErr llm.ErrorKind
		errText string
	}{
		{
			file: "openai-parallel-split.sse",
			want: &llm.Response{Model: "gpt-test", ToolCalls: []llm.ToolCall{
				{ID: "call_read", Name: "ReadFile", Arguments: `{"path": "README.md"}`},
				{ID: "call_ls", Name: "LS", Arguments: `{"path": "cmd"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 120, CompletionTokens: 40, TotalTokens: 160}, UsageReported: true},
		},
		{
			file: "azure-empty-choices-first.sse",
			want: &llm.Response{Model: "gpt-az", ToolCalls: []llm.ToolCall{
				{ID: "call_grep", Name: "Grep", Arguments: `{"pattern":"TODO"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 110, CompletionTokens: 90, TotalTokens: 200, ReasoningTokens: 64}, UsageReported: true},
		},
		{
			file: "groq-whole-calls-usage-thrice.sse",
			want: &llm.Response{Model: "kimi-test", Text: "Listing both.", ToolCalls: []llm.ToolCall{
				{ID: "functions.LS:0", Name: "LS", Arguments: `{"path":"a"}`},
				{ID: "functions.LS:1", Name: "LS", Arguments: `{"path":"b"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 300, CompletionTokens: 30, TotalTokens: 330}, UsageReported: true},
		},
		{
			file: "xai-no-finish-key-reasoning.sse",
			want: &llm.Response{Model: "grok-test", Reasoning: "The user wants a listing.", ToolCalls: []llm.ToolCall{
				{ID: "call_x_1", Name: "LS", Arguments: `{"path":"."}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 400, CompletionTokens: 50, TotalTokens: 700, CachedTokens: 128, ReasoningTokens: 250}, UsageReported: true},
		},
		{
			file: "openrouter-comments-finish-twice.sse",
			want: &llm.Response{Model: "anthropic/claude-test", ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "Glob", Arguments: `{"pattern": "*.go"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 500, CompletionTokens: 70, TotalTokens: 570}, UsageReported: true},
		},
		{
			file: "openrouter-reasoning-field.sse",
			want: &llm.Response{Model: "moonshot/kimi-test", Text: "Done: 42", Reasoning: " Need to read it.",
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 60, CompletionTokens: 20, TotalTokens: 80, ReasoningTokens: 12}, UsageReported: true},
		},
		{
			file: "mistral-no-index-same-chunk.sse",
			want: &llm.Response{Model: "mistral-test", ToolCalls: []llm.ToolCall{
				{ID: "mAbC1", Name: "ReadFile", Arguments: `{"path": "go.mod"}`},
				{ID: "mAbC2", Name: "ReadFile", Arguments: `{"path": "go.sum"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}, UsageReported: true},
		},
		{
			file: "mistral-content-array.sse",
			want: &llm.Response{Model: "magistral-test", Text: "3 + 3 = 6", Reasoning: "Three plus three is six.",
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 12, CompletionTokens: 28, TotalTokens: 40}, UsageReported: true},
		},
		{
			file: "anthropic-index-one-no-usage.sse",
			want: &llm.Response{Model: "claude-test", Text: "Opening it.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_t", Name: "ReadFile", Arguments: `{"path": "b.txt"}`},
			}, FinishReason: llm.FinishToolCalls,
				// Estimated: the user message (4+1) and the output (3+2+5).
				Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 10, TotalTokens: 15}},
		},
		{
			file: "alibaba-empty-id-continuations.sse",
			want: &llm.Response{Model: "qwen-test", ToolCalls: []llm.ToolCall{
				{ID: "call_q1", Name: "Grep", Arguments: `{"pattern": "func main"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 250, CompletionTokens: 25, TotalTokens: 275}, UsageReported: true},
		},
		{
			file: "glm-empty-name-continuation.sse",
			want: &llm.Response{Model: "glm-test", ToolCalls: []llm.ToolCall{
				{ID: "chatcmpl-tool-aa", Name: "WebFetch", Arguments: `{"url": "https://example.test/"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 150, CompletionTokens: 12, TotalTokens: 162, CachedTokens: 100}, UsageReported: true},
		},
		{
			file: "claude-proxy-name-without-arguments.sse",
			want: &llm.Response{Model: "claude-proxy-test", Text: "Checking now:", ToolCalls: []llm.ToolCall{
				{ID: "toolu_p", Name: "TodoRead", Arguments: `{}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 9000, CompletionTokens: 30, TotalTokens: 9030, CachedTokens: 8000}, UsageReported: true},
		},
		{
			// prompt_tokens counted only the uncached input: the cached
			// tokens are added back, so Usage.PromptTokens is the input.
			file: "router-prompt-excludes-cached.sse",
			want: &llm.Response{Model: "glm-router", Text: "Cached.", FinishReason: llm.FinishStop,
				Usage: llm.Usage{PromptTokens: 8667, CompletionTokens: 76, TotalTokens: 8743, CachedTokens: 8576}, UsageReported: true},
		},
		{
			// Anthropic's names through its OpenAI-compatible endpoint:
			// input excludes cache reads and writes.
			file: "anthropic-compat-cache-read.sse",
			want: &llm.Response{Model: "claude-compat", Text: "From cache.", FinishReason: llm.FinishStop,
				Usage: llm.Usage{PromptTokens: 12340, CompletionTokens: 5, TotalTokens: 12345, CachedTokens: 12000}, UsageReported: true},
		},
		{
			file: "deepseek-cache-hit.sse",
			want: &llm.Response{Model: "deepseek-chat", Text: "Hit.", FinishReason: llm.FinishStop,
				Usage: llm.Usage{PromptTokens: 2000, CompletionTokens: 3, TotalTokens: 2003, CachedTokens: 1920}, UsageReported: true},
		},
		{
			file: "deepseek-reasoning-only-length.sse",
			want: &llm.Response{Model: "deepseek-test", Reasoning: "Thinking about a title",
				FinishReason: llm.FinishLength, Usage: llm.Usage{PromptTokens: 150, CompletionTokens: 40, TotalTokens: 190, ReasoningTokens: 40}, UsageReported: true},
		},
		{
			file: "openai-n3-interleaved.sse",
			want: &llm.Response{Model: "gpt-test", Text: `{"n":1}`,
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 70, CompletionTokens: 15, TotalTokens: 85}, UsageReported: true},
		},
		{
			file: "openai-refusal.sse",
			want: &llm.Response{Model: "gpt-test", Text: "I can't help with that.", Refusal: "I can't help with that.",
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 50, CompletionTokens: 8, TotalTokens: 58}, UsageReported: true},
		},
		{
			file: "avian-spaces-finish-twice.sse",
			want: &llm.Response{Model: "kimi-av", Text: " Hello, world.   \n\n", Reasoning: "Plan: say hi.",
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 20, CompletionTokens: 9, TotalTokens: 29}, UsageReported: true},
		},
		{
			file: "done-without-finish.sse",
			want: &llm.Response{Model: "local-test", Text: "All done.", FinishReason: llm.FinishStop,
				Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}},
		},
		{
			file: "invalid-args-verbatim.sse",
			want: &llm.Response{Model: "local-test", ToolCalls: []llm.ToolCall{
				{ID: "call_bad", Name: "ReadFile", Arguments: `{"path": "x', oops`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}, UsageReported: true},
		},
		{
			file: "same-index-new-ids.sse",
			want: &llm.Response{Model: "gemini-compat-test", ToolCalls: []llm.ToolCall{
				{ID: "call_g1", Name: "LS", Arguments: `{"path":"x"}`},
				{ID: "call_g2", Name: "LS", Arguments: `{"path":"y"}`},
			}, FinishReason: llm.FinishToolCalls, Usage: llm.Usage{PromptTokens: 10, CompletionTokens: 6, TotalTokens: 16}, UsageReported: true},
		},
		{
			file: "non-stream.json",
			want: &llm.Response{Model: "proxy-test", Text: "Plain JSON answer.", Reasoning: "short",
				FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 9, CompletionTokens: 4, TotalTokens: 13}, UsageReported: true},
		},
		{file: "midstream-error-no-done.sse", wantErr: llm.KindServer, errText: "The server failed mid-answer."},
		{file: "cut-no-finish.sse", wantErr: llm.KindNetwork, errText: "stream ended before the response finished"},
		{file: "event-error.sse", wantErr: llm.KindServer, errText: "Overloaded"},
		{file: "bad-chunk.sse", wantErr: llm.KindBadResponse, errText: "unparseable stream chunk"},
		{file: "html-page.html", wantErr: llm.KindBadResponse, errText: "HTML page"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch filepath.Ext(tt.file) {
				case ".json":
					w.Header().Set("Content-Type", "application/json")
				case ".html":
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
				default:
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			c, _ := newAdapter(t, srv.URL, func(o *llm.OpenAIOptions) { o.MaxRetries = -1 })
			got, err := c.Stream(t.Context(), userRequest("hi"), nil)
			if tt.wantErr != "" {
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v, want a *llm.Error of kind %s", err, tt.wantErr)
				}
				if e.Kind != tt.wantErr || !strings.Contains(e.Error(), tt.errText) {
					t.Fatalf("err = %v (kind %s), want kind %s containing %q", e, e.Kind, tt.wantErr, tt.errText)
				}
				if got != nil {
					t.Errorf("partial response returned with the error: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, ignoreLedger); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}
