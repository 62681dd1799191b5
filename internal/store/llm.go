package store

import (
	"encoding/json"

	"github.com/odin-code/odin/internal/llm"
)

// LLMMessages converts stored history (as Messages returns it) into the
// messages of a model request. Text parts are joined into Content,
// reasoning into Reasoning, tool calls into ToolCalls; a tool message with
// several results becomes one llm message per result, because the Chat
// Completions protocol links each tool message to exactly one call. Image
// parts become the message's Images (in a tool message, the Images of the
// result they follow). Finish
// parts carry no content for the model and are dropped, as is a message
// left with nothing to say (an assistant reply that was cut off before any
// output).
func LLMMessages(msgs []Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			first := len(out)
			for _, p := range m.Parts {
				switch v := p.(type) {
				case ToolResultPart:
					out = append(out, llm.Message{Role: llm.RoleTool, Content: v.Content, ToolCallID: v.ToolCallID, Name: v.Name})
				case ImagePart:
					// An image belongs to the result before it.
					if len(out) > first {
						out[len(out)-1].Images = append(out[len(out)-1].Images, v.Image())
					}
				}
			}
			continue
		}
		lm := llm.Message{Role: m.Role}
		injected := false
		for _, p := range m.Parts {
			switch v := p.(type) {
			case TextPart:
				lm.Content += v.Text
				injected = injected || v.Injected
			case ReasoningPart:
				lm.Reasoning += v.Text
			case ImagePart:
				lm.Images = append(lm.Images, v.Image())
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
		if injected {
			lm.Typed = m.Text()
		}
		out = append(out, lm)
	}
	return out
}
