package store

import (
	"encoding/json"

	"github.com/odin-code/odin/internal/llm"
)

// LLMMessages converts stored history (as Messages returns it) into the
// messages of a model request. Text parts are joined into Content,
// reasoning into Reasoning, tool calls into ToolCalls; a tool message with
// several results becomes one llm message per result, because the Chat
// Completions protocol links each tool message to exactly one call. Finish
// parts carry no content for the model and are dropped, as is a message
// left with nothing to say (an assistant reply that was cut off before any
// output).
func LLMMessages(msgs []Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			for _, r := range m.ToolResults() {
				out = append(out, llm.Message{Role: llm.RoleTool, Content: r.Content, ToolCallID: r.ToolCallID, Name: r.Name})
			}
			continue
		}
		lm := llm.Message{Role: m.Role}
		for _, p := range m.Parts {
			switch v := p.(type) {
			case TextPart:
				lm.Content += v.Text
			case ReasoningPart:
				lm.Reasoning += v.Text
			case ToolCallPart:
				tc := llm.ToolCall{ID: v.ID, Name: v.Name, Arguments: v.Input}
				if v.Extra != "" {
					tc.Extra = json.RawMessage(v.Extra)
				}
				lm.ToolCalls = append(lm.ToolCalls, tc)
			}
		}
		if lm.Content == "" && len(lm.ToolCalls) == 0 && m.Role == llm.RoleAssistant {
			continue
		}
		out = append(out, lm)
	}
	return out
}
