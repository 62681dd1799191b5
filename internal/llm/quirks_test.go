package llm_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

var usage = &llm.Usage{PromptTokens: 201, CompletionTokens: 58, TotalTokens: 259}

func reported(u *llm.Usage) llm.Usage { return *u }

// TestQuirks drives the real adapter against the scripted server over HTTP,
// one provider quirk per case, and asserts the exact Response.
func TestQuirks(t *testing.T) {
	two := []llmtest.ToolCall{
		{ID: "call_add", Name: "add", Arguments: llmtest.Args(map[string]int{"a": 2, "b": 3})},
		{ID: "call_mul", Name: "multiply", Arguments: llmtest.Args(map[string]int{"a": 2, "b": 3})},
	}
	twoWant := []llm.ToolCall{
		{ID: "call_add", Name: "add", Arguments: `{"a":2,"b":3}`},
		{ID: "call_mul", Name: "multiply", Arguments: `{"a":2,"b":3}`},
	}
	tests := []struct {
		name string
		step llmtest.Step
		want llm.Response
	}{
		{
			name: "parallel calls with arguments split over many deltas",
			step: llmtest.Step{ToolCalls: two, ChunkSize: 2, Usage: usage},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "whole tool call in one chunk",
			step: llmtest.Step{Text: "Doing both.", ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{ToolCallWhole: true}},
			want: llm.Response{Text: "Doing both.", ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "missing index, whole calls, finish and usage in the same chunk (Mistral)",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{NoIndex: true, ToolCallWhole: true, UsageOnFinish: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "missing index with split arguments",
			step: llmtest.Step{ToolCalls: two, ChunkSize: 3, Usage: usage, Quirks: llmtest.Quirks{NoIndex: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "index starting at 1 (Anthropic-compatible)",
			step: llmtest.Step{Text: "Reading it.", ToolCalls: two[:1], Usage: usage, Quirks: llmtest.Quirks{IndexBase: 1}},
			want: llm.Response{Text: "Reading it.", ToolCalls: twoWant[:1], FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "id, type and name repeated on every chunk",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{RepeatID: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "empty id on continuation deltas (Alibaba)",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{EmptyID: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "empty name on continuation deltas (Mistral serving GLM)",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{EmptyName: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "name without arguments key and empty arguments become {}",
			step: llmtest.Step{Text: "Listing:", ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "list", Arguments: llmtest.RawArgs("")}}, Usage: usage,
				Quirks: llmtest.Quirks{NameWithoutArguments: true, IndexBase: 1, NoFinishKey: true, UsageOnFinish: true}},
			want: llm.Response{Text: "Listing:", ToolCalls: []llm.ToolCall{{ID: "toolu_1", Name: "list", Arguments: "{}"}}, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "finish_reason stop although tool calls were sent",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{StopWithTools: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "finish_reason sent twice, usage on both (OpenRouter)",
			step: llmtest.Step{ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{FinishTwice: true, UsageOnFinish: true, Comments: true}},
			want: llm.Response{ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "finish_reason key absent before the end (xAI)",
			step: llmtest.Step{Reasoning: "Add, then multiply.", ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{NoFinishKey: true, ToolCallWhole: true}},
			want: llm.Response{Reasoning: "Add, then multiply.", ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "usage on the finish chunk and again on a trailing chunk (Groq) is counted once",
			step: llmtest.Step{Text: "Sure.", ToolCalls: two, Usage: usage, Quirks: llmtest.Quirks{UsageTwice: true, ToolCallWhole: true}},
			want: llm.Response{Text: "Sure.", ToolCalls: twoWant, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "cumulative usage on every chunk: the last one, never a sum",
			step: llmtest.Step{Text: "Counting tokens as we go.", Usage: usage, Quirks: llmtest.Quirks{UsageEveryChunk: true}},
			want: llm.Response{Text: "Counting tokens as we go.", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "usage.cost is an object",
			step: llmtest.Step{Text: "ok", Usage: usage, Quirks: llmtest.Quirks{UsageCostObject: true, UsageOnFinish: true}},
			want: llm.Response{Text: "ok", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "choices: [] first chunk (Azure prompt filter)",
			step: llmtest.Step{ToolCalls: two[:1], Usage: usage, Quirks: llmtest.Quirks{EmptyChoicesFirst: true}},
			want: llm.Response{ToolCalls: twoWant[:1], FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "n>1 interleaved choices: choice 0 only",
			step: llmtest.Step{Text: `{"city":"Oslo"}`, ToolCalls: two[:1], Usage: usage, Quirks: llmtest.Quirks{Choices: 3}},
			want: llm.Response{Text: `{"city":"Oslo"}`, ToolCalls: twoWant[:1], FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "SSE comment keep-alives",
			step: llmtest.Step{Text: "still here", Usage: usage, Quirks: llmtest.Quirks{Comments: true}},
			want: llm.Response{Text: "still here", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "no [DONE] after the finish",
			step: llmtest.Step{Text: "bye", Usage: usage, NoDone: true},
			want: llm.Response{Text: "bye", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "refusal delta",
			step: llmtest.Step{Refusal: "I can't help with that.", Usage: usage},
			want: llm.Response{Text: "I can't help with that.", Refusal: "I can't help with that.", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "reasoning in reasoning_content (DeepSeek, GLM, llama.cpp)",
			step: llmtest.Step{Reasoning: "Think first.", Text: "Answer.", Usage: usage, Quirks: llmtest.Quirks{NullContent: true}},
			want: llm.Response{Reasoning: "Think first.", Text: "Answer.", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "reasoning in reasoning (OpenRouter)",
			step: llmtest.Step{Reasoning: " The user asks.", Text: "Answer.", Usage: usage, Quirks: llmtest.Quirks{ReasoningField: "reasoning"}},
			want: llm.Response{Reasoning: " The user asks.", Text: "Answer.", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "reasoning as Mistral thinking parts, text as parts",
			step: llmtest.Step{Reasoning: "2+2=4.", Text: "2 + 2 = 4", Usage: usage, Quirks: llmtest.Quirks{ReasoningField: "thinking_parts", ContentParts: true}},
			want: llm.Response{Reasoning: "2+2=4.", Text: "2 + 2 = 4", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "content preserved byte-exact",
			step: llmtest.Step{Text: " I'll add them.   \n\n\t", ChunkSize: 1, Usage: usage},
			want: llm.Response{Text: " I'll add them.   \n\n\t", FinishReason: llm.FinishStop, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "invalid JSON arguments kept verbatim",
			step: llmtest.Step{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "ReadFile", Arguments: llmtest.RawArgs(`{"path": "a.go",`)}}, Usage: usage},
			want: llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ReadFile", Arguments: `{"path": "a.go",`}}, FinishReason: llm.FinishToolCalls, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "finish_reason length is visible",
			step: llmtest.Step{Text: `{"`, FinishReason: "length", Usage: usage},
			want: llm.Response{Text: `{"`, FinishReason: llm.FinishLength, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "reasoning only, then length, with no text",
			step: llmtest.Step{Reasoning: "A long thought", FinishReason: "length", Usage: usage},
			want: llm.Response{Reasoning: "A long thought", FinishReason: llm.FinishLength, Usage: reported(usage), UsageReported: true},
		},
		{
			name: "no usage at all: estimated and marked so",
			step: llmtest.Step{Text: "abcdefgh", Quirks: llmtest.Quirks{NoUsage: true}},
			// prompt: "hi" (1) + 4 per message; output: 8 bytes = 2.
			want: llm.Response{Text: "abcdefgh", FinishReason: llm.FinishStop, Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", tt.step))
			c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxRetries = -1 })
			var ev events
			got, err := c.Stream(t.Context(), userRequest("hi"), ev.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			tt.want.Model = "test-model"
			if diff := cmp.Diff(&tt.want, got, ignoreLedger); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			// The events tell the same story as the response; a refusal
			// is streamed as text, since it is the answer the user sees.
			if s := ev.textSince(llm.EventText); s != got.Text {
				t.Errorf("text events = %q, response text %q", s, got.Text)
			}
			if s := ev.textSince(llm.EventReasoning); s != got.Reasoning {
				t.Errorf("reasoning events = %q, response reasoning %q", s, got.Reasoning)
			}
			var announced []string
			for _, e := range ev.kinds(llm.EventToolCall) {
				announced = append(announced, e.ToolCall.ID+" "+e.ToolCall.Name)
			}
			var calls []string
			for _, c := range got.ToolCalls {
				calls = append(calls, c.ID+" "+c.Name)
			}
			if diff := cmp.Diff(calls, announced); diff != "" {
				t.Errorf("EventToolCall announcements (-calls +events):\n%s", diff)
			}
		})
	}
}
