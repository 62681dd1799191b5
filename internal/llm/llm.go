package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Role is the author of a message in a conversation.
type Role string

// The roles of the Chat Completions protocol.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one function call requested by the model.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text exactly as the model produced it. It may be
	// invalid JSON; callers report that back to the model as a tool error.
	Arguments string `json:"arguments"`
	// Extra holds the fields the provider sent on the call beyond index,
	// id, type and function, as one JSON object (Gemini's
	// extra_content.google.thought_signature, for instance). It is opaque
	// to Odin and sent back verbatim on the call in later requests: some
	// providers reject a follow-up whose calls lost them.
	Extra json.RawMessage `json:"extra,omitempty"`
	// Dropped, when not zero, is the size in bytes of arguments longer
	// than the request's MaxToolArguments. They were discarded as they
	// streamed in (so an oversized call costs no more memory than the
	// limit), Arguments is "{}", and the call must not run: the caller
	// answers it with a tool error.
	Dropped int64 `json:"dropped,omitempty"`
}

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Reasoning is the model's reasoning text for an assistant message. It is
	// kept for display and storage; adapters do not send it back.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message (informational).
	Name string `json:"name,omitempty"`
	// Images are pictures attached to a user message (the user's input)
	// or to a tool message (an MCP tool's result). Chat Completions tool
	// messages carry only text, so the images of a run of tool messages
	// are sent in one user message right after it (see encodeRequest).
	Images []Image `json:"images,omitempty"`
	// Typed is the part of a user message's Content the user typed, set
	// when Odin added context around it (the repo map, hook context,
	// reports of detached runs). The model gets Content; the store keeps
	// the rest apart, so transcripts show only Typed. Never sent.
	Typed string `json:"-"`
}

// Image is one picture sent to the model as a base64 data URL.
type Image struct {
	// Name says where the image came from (a file name, an MCP tool); it
	// is shown to the user and in the text that replaces the image for
	// models that take no images.
	Name string `json:"name,omitempty"`
	// MIME is image/png, image/jpeg, image/gif or image/webp.
	MIME string `json:"mime"`
	// Data are the image's bytes.
	Data []byte `json:"data"`
	// Width and Height are the image's size in pixels, 0 when unknown.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// DataURL is the image as the data URL Chat Completions takes.
func (im Image) DataURL() string {
	return "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// Label is how the image is shown in place of itself: "[image: NAME WxH]".
func (im Image) Label() string {
	s := "[image: " + im.Name
	if im.Name == "" {
		s += im.MIME
	}
	if im.Width > 0 && im.Height > 0 {
		s += " " + strconv.Itoa(im.Width) + "x" + strconv.Itoa(im.Height)
	}
	return s + "]"
}

// ToolDef describes a tool the model may call.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
}

// Request is one model call.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolDef
	// MaxTokens caps the completion; 0 leaves it to the provider.
	MaxTokens int
	// Temperature is sent only when set.
	Temperature *float64
	// TextOnly is set for models that take no images: every image is
	// sent as its Label and a note instead.
	TextOnly bool
	// Agent names the Odin agent making the call ("orchestrator", "code",
	// ...). Adapters send it as the X-Odin-Agent header so that scripted
	// servers and proxies can route by agent; providers ignore it.
	Agent string
	// MaxToolArguments bounds the arguments of one tool call in bytes;
	// longer arguments are dropped (ToolCall.Dropped). 0 means
	// DefaultMaxToolArguments, a negative value no limit.
	MaxToolArguments int64
}

// DefaultMaxToolArguments is the largest tool-call arguments accepted when
// the request sets no limit. The write tools take at most 10 MiB of
// content, which JSON escaping can grow by a few MiB; nothing a tool
// accepts needs more.
const DefaultMaxToolArguments = 16 << 20

// FinishReason says why the model stopped.
type FinishReason string

// Finish reasons, normalised across providers.
const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage is the token accounting of one call.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoning_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Response is a completed model turn, accumulated from the stream.
type Response struct {
	Model     string
	Text      string
	Reasoning string
	// Refusal is text the provider sent as a refusal instead of content.
	// Text includes it as well, in arrival order: it is the answer the
	// user must see, and every consumer reads Text.
	Refusal   string
	ToolCalls []ToolCall
	// FinishReason is FinishToolCalls whenever ToolCalls is non-empty, even if
	// the provider said "stop" — except FinishLength and FinishContentFilter,
	// which are kept because the calls may then be cut short.
	FinishReason FinishReason
	Usage        Usage
	// UsageReported is false when the provider sent no usage; Usage then
	// holds a local estimate.
	UsageReported bool
	// Parts is the request's token ledger (Ledger): where its prompt
	// tokens went and which of them the provider served from its cache.
	Parts []PartTokens
}

// EventKind tells which field of an Event is set.
type EventKind int

// Stream event kinds.
const (
	// EventText carries a content delta in Text.
	EventText EventKind = iota + 1
	// EventReasoning carries a reasoning delta in Text.
	EventReasoning
	// EventToolCall announces a tool call once its name is known (ToolCall
	// has ID and Name; Arguments may still be incomplete).
	EventToolCall
	// EventRetry reports that the call failed and will be retried (Retry).
	EventRetry
	// EventRateLimit reports that the call waits for the provider's shared
	// quota (RateWait) before its next attempt.
	EventRateLimit
	// EventToolCallDone says that a call's arguments are complete while
	// the response still streams: the stream moved on to the next call
	// and what the call had was a whole JSON value (ToolCall has ID, Name
	// and Arguments). A consumer may act on the call before the response
	// ends; the Response's ToolCalls stay authoritative, and a caller
	// that acted early compares them (a provider that interleaves calls'
	// fragments could still add to it). Calls whose arguments were
	// dropped (MaxToolArguments) and the last call are never announced
	// so. Like every delta, it is void once an EventRetry follows.
	EventToolCallDone
)

// RetryInfo describes a retry about to happen.
type RetryInfo struct {
	Attempt int   // the attempt that failed, from 1
	Wait    int64 // milliseconds until the next attempt
	Err     error
}

// Event is one streamed increment. Events are delivered in order on the
// goroutine that called Stream.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
	Retry    *RetryInfo
	RateWait *RateWaitInfo
}

// Client streams chat completions.
type Client interface {
	// Stream performs req, calling onEvent (which may be nil) for each delta
	// as it arrives, and returns the accumulated response. Errors are
	// *Error values (use errors.As); on cancellation the error wraps
	// ctx.Err(). Retries happen inside Stream; each one is announced with
	// an EventRetry. A retry restarts the turn: consumers discard deltas
	// received before an EventRetry.
	Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error)
}
