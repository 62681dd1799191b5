package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// buildParams turns a Request into the Chat Completions body. It fails,
// before anything is sent, on input no provider would accept.
func buildParams(req Request, maxTokensParam string) (openai.ChatCompletionNewParams, error) {
	var p openai.ChatCompletionNewParams
	if strings.TrimSpace(req.Model) == "" {
		return p, fmt.Errorf("request names no model")
	}
	if len(req.Messages) == 0 {
		return p, fmt.Errorf("request has no messages")
	}
	p.Model = shared.ChatModel(req.Model)
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if maxTokensParam == maxCompletionTokens {
			p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
		} else {
			p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
		}
	}
	var toolImages []Image // images of the current run of tool messages
	for i, m := range req.Messages {
		if req.TextOnly && len(m.Images) > 0 {
			m = withImageLabels(m)
		}
		wm, err := wireMessage(m)
		if err != nil {
			return p, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, wm)
		if m.Role == RoleTool {
			toolImages = append(toolImages, m.Images...)
		}
		if next := i + 1; len(toolImages) > 0 && (next == len(req.Messages) || req.Messages[next].Role != RoleTool) {
			p.Messages = append(p.Messages, toolImagesMessage(toolImages))
			toolImages = nil
		}
	}
	for _, t := range req.Tools {
		wt, err := wireTool(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, wt)
	}
	return p, nil
}

func wireMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		if len(m.Images) > 0 {
			var parts []openai.ChatCompletionContentPartUnionParam
			if m.Content != "" {
				parts = append(parts, openai.TextContentPart(m.Content))
			}
			for _, im := range m.Images {
				parts = append(parts, imagePart(im))
			}
			return openai.UserMessage(parts), nil
		}
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message has no tool_call_id")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		// Strict providers reject an assistant message whose content is
		// an empty string next to tool calls ("text content blocks must
		// be non-empty"), so the content key is left out in that case.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			fn := &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tc.Name,
					Arguments: wireArguments(tc.Arguments),
				},
			}
			if extra := callExtra(tc.Extra); extra != nil {
				fn.SetExtraFields(extra)
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: fn})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	default:
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

// imagePart is an image as a Chat Completions content part (a base64 data
// URL).
func imagePart(im Image) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: im.DataURL()})
}

// toolImagesMessage carries the images of tool results. Chat Completions
// tool messages take only text, so the pictures an MCP tool returned follow
// the run of tool messages as one user message, each image introduced by
// its label (which names the tool) so the model knows whose it is. The
// tool message's own text already says an image follows.
func toolImagesMessage(images []Image) openai.ChatCompletionMessageParamUnion {
	parts := []openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("The images returned by the tool calls above:"),
	}
	for _, im := range images {
		parts = append(parts, openai.TextContentPart(im.Label()), imagePart(im))
	}
	return openai.UserMessage(parts)
}

// withImageLabels replaces m's images by their labels in its text, for a
// model that takes no images.
func withImageLabels(m Message) Message {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, im := range m.Images {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(im.Label())
		b.WriteString(" (not shown: this model does not take images)")
	}
	m.Content, m.Images = b.String(), nil
	return m
}

// callExtra decodes a call's opaque provider fields for sending back. The
// known keys are dropped so that stored junk can never replace the call's
// id or function; anything that is not a JSON object is ignored.
func callExtra(raw json.RawMessage) map[string]any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch k {
		case "index", "id", "type", "function":
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// wireArguments returns the arguments of a past tool call as sent back to
// the model. Servers that render history through a chat template (vLLM,
// llama.cpp) parse them and reject the whole request when they are not
// JSON, so invalid arguments go back as {}; the tool message answering the
// call already quotes the parse error to the model.
func wireArguments(args string) string {
	if strings.TrimSpace(args) == "" || !json.Valid([]byte(args)) {
		return "{}"
	}
	return args
}

func wireTool(t ToolDef) (openai.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool definition has no name")
	}
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		// Several servers reject a function without a parameters schema.
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	} else if trimmed := bytes.TrimSpace(params); trimmed[0] != '{' || !json.Valid(trimmed) {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	// The schema is sent as the bytes it already is: decoding it into a map
	// for openai-go to encode again cost more than the rest of a request.
	raw, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, params})
	if err != nil {
		return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return openai.ChatCompletionFunctionTool(param.Override[shared.FunctionDefinitionParam](json.RawMessage(raw))), nil
}
