package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// body is the Chat Completions request of a call: the top-level fields,
// encoded with encoding/json; the tools are spliced in from their cached
// encodings (see toolWires).
type body struct {
	Model               string        `json:"model"`
	Messages            []wireMsg     `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	Temperature         *float64      `json:"temperature,omitempty"`
	MaxTokens           int64         `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64         `json:"max_completion_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMsg is one message as sent. Content is a string, a []wirePart, or
// nil (the key is left out).
type wireMsg struct {
	Role       Role   `json:"role"`
	Content    any    `json:"content,omitempty"`
	ToolCalls  []any  `json:"tool_calls,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// wirePart is a content part: text or an image URL.
type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

// wireCall is a past tool call of an assistant message.
type wireCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// encodeRequest returns the Chat Completions body of req. It fails, before
// anything is sent, on input no provider would accept. The body is built
// by hand from plain structs rather than through openai-go's params, whose
// reflective encoder cost a specialist's request more than everything
// else Odin does for it; tools come encoded from tw.
func encodeRequest(req Request, maxTokensParam string, tw *toolWires) ([]byte, error) {
	if strings.TrimSpace(req.Model) == "" {
		return nil, fmt.Errorf("request names no model")
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("request has no messages")
	}
	b := body{Model: req.Model, Stream: true, StreamOptions: streamOptions{IncludeUsage: true}, Temperature: req.Temperature}
	if req.MaxTokens > 0 {
		if maxTokensParam == maxCompletionTokens {
			b.MaxCompletionTokens = int64(req.MaxTokens)
		} else {
			b.MaxTokens = int64(req.MaxTokens)
		}
	}
	b.Messages = make([]wireMsg, 0, len(req.Messages))
	var toolImages []Image // images of the current run of tool messages
	for i, m := range req.Messages {
		if req.TextOnly && len(m.Images) > 0 {
			m = withImageLabels(m)
		}
		wm, err := wireMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		b.Messages = append(b.Messages, wm)
		if m.Role == RoleTool {
			toolImages = append(toolImages, m.Images...)
		}
		if next := i + 1; len(toolImages) > 0 && (next == len(req.Messages) || req.Messages[next].Role != RoleTool) {
			b.Messages = append(b.Messages, toolImagesMessage(toolImages))
			toolImages = nil
		}
	}
	// The struct is encoded first, into a scratch buffer of the process,
	// so that the body is allocated once, at its size, with the cached
	// tools in front: growing a buffer of its own to each request's size
	// was a tenth of what a fan-out allocated.
	rest := scratch.Get().(*bytes.Buffer)
	defer putScratch(rest)
	enc := json.NewEncoder(rest)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	fields := bytes.TrimRight(rest.Bytes(), "\n")
	if len(req.Tools) == 0 {
		return bytes.Clone(fields), nil
	}
	tools := make([][]byte, len(req.Tools))
	size := len(fields) + len(`{"tools":[],`)
	for i, t := range req.Tools {
		raw, err := tw.encoded(t)
		if err != nil {
			return nil, err
		}
		tools[i] = raw
		size += len(raw) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, `{"tools":[`...)
	for i, raw := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	out = append(out, "],"...)
	// The struct's opening brace is dropped: the tools opened the object.
	return append(out, fields[1:]...), nil
}

// scratch holds the buffers encodeRequest encodes a request's fields
// into before copying them out.
var scratch = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxScratch is the largest buffer kept for reuse: a long session's
// request is megabytes, and a pool must not pin one per P.
const maxScratch = 1 << 20

func putScratch(b *bytes.Buffer) {
	if b.Cap() > maxScratch {
		return
	}
	b.Reset()
	scratch.Put(b)
}

func wireMessage(m Message) (wireMsg, error) {
	switch m.Role {
	case RoleSystem:
		return wireMsg{Role: RoleSystem, Content: m.Content}, nil
	case RoleUser:
		if len(m.Images) > 0 {
			var parts []wirePart
			if m.Content != "" {
				parts = append(parts, textPart(m.Content))
			}
			for _, im := range m.Images {
				parts = append(parts, imagePart(im))
			}
			return wireMsg{Role: RoleUser, Content: parts}, nil
		}
		return wireMsg{Role: RoleUser, Content: m.Content}, nil
	case RoleTool:
		if m.ToolCallID == "" {
			return wireMsg{}, fmt.Errorf("tool message has no tool_call_id")
		}
		return wireMsg{Role: RoleTool, Content: m.Content, ToolCallID: m.ToolCallID}, nil
	case RoleAssistant:
		a := wireMsg{Role: RoleAssistant}
		// Strict providers reject an assistant message whose content is
		// an empty string next to tool calls ("text content blocks must
		// be non-empty"), so the content key is left out in that case.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = m.Content
		}
		for _, tc := range m.ToolCalls {
			call := wireCall{ID: tc.ID, Type: "function", Function: wireCallFunction{Name: tc.Name, Arguments: wireArguments(tc.Arguments)}}
			extra := callExtra(tc.Extra)
			if extra == nil {
				a.ToolCalls = append(a.ToolCalls, call)
				continue
			}
			extra["id"], extra["type"], extra["function"] = call.ID, call.Type, call.Function
			a.ToolCalls = append(a.ToolCalls, extra)
		}
		return a, nil
	default:
		return wireMsg{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

func textPart(s string) wirePart { return wirePart{Type: "text", Text: s} }

// imagePart is an image as a Chat Completions content part (a base64 data
// URL).
func imagePart(im Image) wirePart {
	return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: im.DataURL()}}
}

// toolImagesMessage carries the images of tool results. Chat Completions
// tool messages take only text, so the pictures an MCP tool returned follow
// the run of tool messages as one user message, each image introduced by
// its label (which names the tool) so the model knows whose it is. The
// tool message's own text already says an image follows.
func toolImagesMessage(images []Image) wireMsg {
	parts := []wirePart{textPart("The images returned by the tool calls above:")}
	for _, im := range images {
		parts = append(parts, textPart(im.Label()), imagePart(im))
	}
	return wireMsg{Role: RoleUser, Content: parts}
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

// toolWires caches the wire encoding of tool definitions. Every
// specialist of a fan-out offers the same few tools, whose schemas and
// descriptions are most of its request: each is validated and encoded once
// and then copied into the bodies. A definition is looked up by name and
// matched on its whole content, so a changed description or schema is
// encoded anew, never served stale. Safe for concurrent use.
type toolWires struct {
	mu     sync.RWMutex
	byName map[string][]*toolWire
}

// wires is the cache of every client of the process: odin serve makes a
// client per session, and each encoded the same tools again on its first
// call.
var wires toolWires

type toolWire struct {
	desc, params string
	raw          []byte
}

// maxToolVariants bounds the encodings kept per tool name (the agent tool
// differs by mode, an MCP tool may change); the oldest goes first.
const maxToolVariants = 4

// encoded returns t as a Chat Completions tool object.
func (tw *toolWires) encoded(t ToolDef) ([]byte, error) {
	tw.mu.RLock()
	for _, w := range tw.byName[t.Name] {
		if w.desc == t.Description && w.params == string(t.Parameters) {
			tw.mu.RUnlock()
			return w.raw, nil
		}
	}
	tw.mu.RUnlock()
	raw, err := wireTool(t)
	if err != nil {
		return nil, err
	}
	w := &toolWire{desc: t.Description, params: string(t.Parameters), raw: raw}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.byName == nil {
		tw.byName = map[string][]*toolWire{}
	}
	list := tw.byName[t.Name]
	if len(list) >= maxToolVariants {
		list = slices.Delete(list, 0, 1)
	}
	tw.byName[t.Name] = append(list, w)
	return raw, nil
}

// wireTool encodes one tool definition, its schema compacted.
func wireTool(t ToolDef) ([]byte, error) {
	if t.Name == "" {
		return nil, fmt.Errorf("tool definition has no name")
	}
	params := t.Parameters
	if len(bytes.TrimSpace(params)) == 0 {
		// Several servers reject a function without a parameters schema.
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	} else if trimmed := bytes.TrimSpace(params); trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	raw, err := json.Marshal(struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}{"function", function{t.Name, t.Description, params}})
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return raw, nil
}
