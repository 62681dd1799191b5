package store

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/odin-code/odin/internal/llm"
)

// Part is one typed piece of a message: TextPart, ReasoningPart,
// ToolCallPart, ToolResultPart, ImagePart or FinishPart. The set is closed; use a type
// switch on the value types.
type Part interface {
	partType() string
}

// TextPart is visible text: the user's input, the model's answer, a
// summary.
type TextPart struct {
	Text string
	// Injected marks text Odin added to the user's input for the model
	// (the first turn's repo map, hook context, reports of detached runs):
	// the model gets it, transcripts show only what the user typed.
	Injected bool
}

// ReasoningPart is the model's reasoning text.
type ReasoningPart struct {
	Text string
}

// ToolCallPart is a tool call made by an assistant message.
type ToolCallPart struct {
	ID   string
	Name string
	// Input is the arguments' JSON text exactly as the model produced it.
	Input string
	// Finished is false while the call's arguments are still streaming.
	Finished bool
	// Extra is the provider's opaque fields on the call (llm.ToolCall's
	// Extra, a JSON object), kept so that a resumed session sends them
	// back: Gemini rejects a replayed call without its thought signature.
	Extra string
}

// ToolResultPart answers a ToolCallPart; it lives in a tool message.
type ToolResultPart struct {
	ToolCallID string
	Name       string
	Content    string
	IsError    bool
	// Cancelled marks a call that never ran to completion (the user
	// cancelled, or the process died and Messages repaired the history).
	Cancelled bool
}

// ImagePart is a picture: one the user attached to a user message, or one
// an MCP tool returned, in a tool message right after the ToolResultPart it
// belongs to.
type ImagePart struct {
	// Name is the file name or the tool that produced it.
	Name string
	// MIME is image/png, image/jpeg, image/gif or image/webp.
	MIME string
	Data []byte
	// Width and Height are in pixels, 0 when unknown.
	Width, Height int
}

// Image is the part as the model's image.
func (p ImagePart) Image() llm.Image {
	return llm.Image{Name: p.Name, MIME: p.MIME, Data: p.Data, Width: p.Width, Height: p.Height}
}

// ImagePartOf is the part holding im.
func ImagePartOf(im llm.Image) ImagePart {
	return ImagePart{Name: im.Name, MIME: im.MIME, Data: im.Data, Width: im.Width, Height: im.Height}
}

// FinishPart records why the model stopped and when.
type FinishPart struct {
	Reason llm.FinishReason
	Time   time.Time
}

func (TextPart) partType() string       { return "text" }
func (ReasoningPart) partType() string  { return "reasoning" }
func (ToolCallPart) partType() string   { return "tool_call" }
func (ToolResultPart) partType() string { return "tool_result" }
func (FinishPart) partType() string     { return "finish" }
func (ImagePart) partType() string      { return "image" }

// CancelledContent is the result Messages gives a tool call that has none.
const CancelledContent = "cancelled: the session ended before this tool call finished"

// Text returns the concatenated text parts of m that are not injected
// context: what a transcript shows (the model gets all of them).
func (m Message) Text() string {
	var s string
	for _, p := range m.Parts {
		if t, ok := p.(TextPart); ok && !t.Injected {
			s += t.Text
		}
	}
	return s
}

// ToolCalls returns the tool-call parts of m in order.
func (m Message) ToolCalls() []ToolCallPart {
	var out []ToolCallPart
	for _, p := range m.Parts {
		if c, ok := p.(ToolCallPart); ok {
			out = append(out, c)
		}
	}
	return out
}

// ToolResults returns the tool-result parts of m in order.
func (m Message) ToolResults() []ToolResultPart {
	var out []ToolResultPart
	for _, p := range m.Parts {
		if r, ok := p.(ToolResultPart); ok {
			out = append(out, r)
		}
	}
	return out
}

// MaxToolOutput caps the output kept in the tool history: the model saw the
// whole output already, the history only needs enough to audit it.
const MaxToolOutput = 64 << 10

// CapOutput returns s cut to at most max bytes, on a UTF-8 boundary, with a
// note of how much was dropped. Capping a capped string changes nothing.
func CapOutput(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n[… %d bytes truncated]", len(s))
	keep := max - len(note)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf("\n[… %d bytes truncated]", len(s)-keep)
}

// wirePart is the JSON form of every part (export, import, the HTTP API):
// one flat object tagged by type.
type wirePart struct {
	Type       string    `json:"type"`
	Text       string    `json:"text,omitempty"`
	ID         string    `json:"id,omitempty"`
	Name       string    `json:"name,omitempty"`
	Input      string    `json:"input,omitempty"`
	Finished   bool      `json:"finished,omitempty"`
	Extra      string    `json:"extra,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	Content    string    `json:"content,omitempty"`
	IsError    bool      `json:"is_error,omitempty"`
	Cancelled  bool      `json:"cancelled,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Time       time.Time `json:"time,omitzero"`
	MIME       string    `json:"mime,omitempty"`
	Data       []byte    `json:"data,omitempty"`
	Width      int       `json:"width,omitempty"`
	Height     int       `json:"height,omitempty"`
	Injected   bool      `json:"injected,omitempty"`
}

func toWire(p Part) (wirePart, error) {
	switch v := p.(type) {
	case TextPart:
		return wirePart{Type: "text", Text: v.Text, Injected: v.Injected}, nil
	case ReasoningPart:
		return wirePart{Type: "reasoning", Text: v.Text}, nil
	case ToolCallPart:
		return wirePart{Type: "tool_call", ID: v.ID, Name: v.Name, Input: v.Input, Finished: v.Finished, Extra: v.Extra}, nil
	case ToolResultPart:
		return wirePart{Type: "tool_result", ToolCallID: v.ToolCallID, Name: v.Name, Content: v.Content, IsError: v.IsError, Cancelled: v.Cancelled}, nil
	case FinishPart:
		w := wirePart{Type: "finish", Reason: string(v.Reason)}
		if !v.Time.IsZero() {
			w.Time = v.Time.UTC()
		}
		return w, nil
	case ImagePart:
		return wirePart{Type: "image", Name: v.Name, MIME: v.MIME, Data: v.Data, Width: v.Width, Height: v.Height}, nil
	case nil:
		return wirePart{}, fmt.Errorf("nil part: %w", ErrInvalid)
	}
	return wirePart{}, fmt.Errorf("part type %T: %w", p, ErrInvalid)
}

func fromWire(w wirePart) (Part, error) {
	switch w.Type {
	case "text":
		return TextPart{Text: w.Text, Injected: w.Injected}, nil
	case "reasoning":
		return ReasoningPart{Text: w.Text}, nil
	case "tool_call":
		return ToolCallPart{ID: w.ID, Name: w.Name, Input: w.Input, Finished: w.Finished, Extra: w.Extra}, nil
	case "tool_result":
		return ToolResultPart{ToolCallID: w.ToolCallID, Name: w.Name, Content: w.Content, IsError: w.IsError, Cancelled: w.Cancelled}, nil
	case "finish":
		return FinishPart{Reason: llm.FinishReason(w.Reason), Time: w.Time}, nil
	case "image":
		return ImagePart{Name: w.Name, MIME: w.MIME, Data: w.Data, Width: w.Width, Height: w.Height}, nil
	}
	return nil, fmt.Errorf("unknown part type %q: %w", w.Type, ErrInvalid)
}

func wireParts(parts []Part) ([]wirePart, error) {
	out := make([]wirePart, len(parts))
	for i, p := range parts {
		w, err := toWire(p)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		out[i] = w
	}
	return out, nil
}

func partsFromWire(ws []wirePart) ([]Part, error) {
	out := make([]Part, len(ws))
	for i, w := range ws {
		p, err := fromWire(w)
		if err != nil {
			return nil, fmt.Errorf("part %d: %w", i, err)
		}
		out[i] = p
	}
	return out, nil
}

// wireMessage is the JSON form of a Message (export, the HTTP API).
type wireMessage struct {
	ID        string     `json:"id"`
	SessionID string     `json:"session_id"`
	Seq       int64      `json:"seq"`
	Role      llm.Role   `json:"role"`
	Model     string     `json:"model,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	Parts     []wirePart `json:"parts"`
	// Omitted when empty, so exports of sessions without them keep
	// their bytes.
	InputID     string `json:"input_id,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// MarshalJSON renders m with its parts as tagged objects
// ({"type":"tool_call","id":...}).
func (m Message) MarshalJSON() ([]byte, error) {
	ws, err := wireParts(m.Parts)
	if err != nil {
		return nil, fmt.Errorf("message %s: %w", m.ID, err)
	}
	return json.Marshal(wireMessage{
		ID: m.ID, SessionID: m.SessionID, Seq: m.Seq, Role: m.Role, Model: m.Model,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Parts: ws, InputID: m.InputID, Interrupted: m.Interrupted,
	})
}

// UnmarshalJSON parses what MarshalJSON produced.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	parts, err := partsFromWire(w.Parts)
	if err != nil {
		return fmt.Errorf("message %s: %w", w.ID, err)
	}
	*m = Message{
		ID: w.ID, SessionID: w.SessionID, Seq: w.Seq, Role: w.Role, Model: w.Model,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Parts: parts, InputID: w.InputID, Interrupted: w.Interrupted,
	}
	return nil
}

func validRole(r llm.Role) bool {
	switch r {
	case llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		return true
	}
	return false
}
