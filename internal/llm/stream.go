package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The wire types below are decoded from the raw JSON of each chunk rather
// than through openai-go's typed chunk, because real providers send shapes
// those types cannot carry: reasoning in reasoning_content or reasoning,
// content as an array of parts, tool calls without an index, usage.cost as
// an object, finish_reason absent rather than null.

type wireChunk struct {
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// Object is "error" when vLLM (and servers built like it) report a
	// failure inside a 200 stream: the error's fields are then the chunk's
	// own, and [DONE] usually follows as if the answer were complete.
	Object  string `json:"object"`
	Message string `json:"message"`
}

type wireChoice struct {
	Index        *int      `json:"index"`
	Delta        wireDelta `json:"delta"`
	Message      wireDelta `json:"message"` // non-streamed responses
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content          json.RawMessage `json:"content"`
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent *string         `json:"reasoning_content"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	// FunctionCall is the legacy (pre-tools) single call format, still
	// streamed by older Azure deployments and some relays.
	FunctionCall *wireFunction `json:"function_call"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
	// Extra holds the call's other fields, so that a provider's opaque
	// additions to a call can be sent back with it.
	Extra map[string]jsontext.Value `json:",unknown"`
}

// tokenCount accepts an integer, a float (some routers send 12.0) or null.
type tokenCount struct {
	n   int64
	set bool
}

func (t *tokenCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	t.n, t.set = int64(f), true
	return nil
}

type wireUsage struct {
	PromptTokens     tokenCount `json:"prompt_tokens"`
	CompletionTokens tokenCount `json:"completion_tokens"`
	TotalTokens      tokenCount `json:"total_tokens"`
	PromptCacheHit   tokenCount `json:"prompt_cache_hit_tokens"` // DeepSeek
	// CacheRead and CacheWrite are Anthropic's names, which its
	// OpenAI-compatible endpoint and proxies (LiteLLM) pass through.
	CacheRead           tokenCount `json:"cache_read_input_tokens"`
	CacheWrite          tokenCount `json:"cache_creation_input_tokens"`
	PromptTokensDetails *struct {
		CachedTokens tokenCount `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens tokenCount `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usage normalises the provider's figures to Usage's meaning: PromptTokens
// counts every input token, CachedTokens the part served from the
// provider's prompt cache.
func (w *wireUsage) usage() Usage {
	u := Usage{
		PromptTokens:     w.PromptTokens.n,
		CompletionTokens: w.CompletionTokens.n,
		TotalTokens:      w.TotalTokens.n,
	}
	switch {
	case w.PromptTokensDetails != nil && w.PromptTokensDetails.CachedTokens.set:
		u.CachedTokens = w.PromptTokensDetails.CachedTokens.n
	case w.PromptCacheHit.set:
		u.CachedTokens = w.PromptCacheHit.n
	case w.CacheRead.set:
		u.CachedTokens = w.CacheRead.n
	}
	// Some providers count only the uncached input as prompt tokens
	// (GLM through routers: prompt 91, cached 8576, total 8743). Cached
	// tokens cannot exceed the input, so more cached than prompt tokens
	// means the prompt figure excluded them; a cache write is input too,
	// in Anthropic's accounting.
	if u.CachedTokens > u.PromptTokens {
		u.PromptTokens += u.CachedTokens + w.CacheWrite.n
	}
	if w.CompletionTokensDetails != nil {
		u.ReasoningTokens = w.CompletionTokensDetails.ReasoningTokens.n
	}
	if !w.TotalTokens.set {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// contentPart is one element of content sent as an array (Mistral).
type contentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking json.RawMessage `json:"thinking"`
}

// accumulator builds a Response from the chunks of one attempt and emits
// events as deltas arrive. It only ever looks at choice 0.
type accumulator struct {
	onEvent func(Event)

	model     string
	text      strings.Builder
	reasoning strings.Builder
	refusal   strings.Builder
	calls     []*callAcc
	byIndex   map[int]int // wire index -> position in calls

	finish   string // first finish_reason seen, raw
	finished bool
	done     bool // [DONE] seen

	usage, partialUsage *Usage

	// maxArgs bounds one call's arguments (negative: no bound).
	maxArgs int64
}

type callAcc struct {
	id        string
	synthetic bool // id made up locally because the provider sent none
	name      string
	args      strings.Builder
	extra     map[string]json.RawMessage
	announced bool
	// done: EventToolCallDone was sent for it.
	done bool
	// dropped counts the bytes of arguments past the limit: the
	// arguments are then discarded, not accumulated.
	dropped int64
}

// argsComplete reports whether the call's arguments so far are a whole JSON
// value: a later fragment cannot belong to it.
func (c *callAcc) argsComplete() bool {
	s := strings.TrimSpace(c.args.String())
	if s == "" || (s[0] == '{' && s[len(s)-1] != '}') {
		// An object cut short: the common case, decided without
		// validating megabytes on every fragment.
		return false
	}
	return json.Valid([]byte(s))
}

// addArgs appends a fragment of the call's arguments, or counts it once
// the arguments are past max: an oversized call is refused anyway, and
// keeping it would cost its whole size in memory.
func (c *callAcc) addArgs(frag string, max int64) {
	if frag == "" {
		return
	}
	if c.dropped == 0 && (max < 0 || int64(c.args.Len()+len(frag)) <= max) {
		c.args.WriteString(frag)
		return
	}
	if c.dropped == 0 {
		c.dropped = int64(c.args.Len())
		c.args = strings.Builder{}
	}
	c.dropped += int64(len(frag))
}

// newAccumulator returns an accumulator that drops tool-call arguments
// longer than maxArgs bytes (0: DefaultMaxToolArguments; negative: none).
func newAccumulator(onEvent func(Event), maxArgs int64) *accumulator {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	if maxArgs == 0 {
		maxArgs = DefaultMaxToolArguments
	}
	return &accumulator{onEvent: onEvent, byIndex: map[int]int{}, maxArgs: maxArgs}
}

// chunk folds one SSE data payload into the accumulator. A returned error is
// an *Error: an error object sent by the provider or an unparseable chunk.
func (a *accumulator) chunk(data []byte) error {
	var c wireChunk
	// Chunks are decoded with encoding/json's semantics by the v2 engine
	// (go-json-experiment/json/v1): every delta of every stream passes
	// here, and it decodes a chunk in half the time with a third of the
	// allocations, capturing a call's unknown fields without a second pass.
	if err := jsonv1.Unmarshal(data, &c); err != nil {
		return &Error{Kind: KindBadResponse, Message: fmt.Sprintf("unparseable stream chunk %s", snippet(data)), Err: err}
	}
	if len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null")) {
		return streamError(c.Error)
	}
	if c.Object == "error" {
		return streamError(data)
	}
	if a.model == "" {
		a.model = c.Model
	}
	if c.Usage != nil {
		u := c.Usage.usage()
		// A usage block may be repeated (finish chunk, trailing chunk,
		// cumulative counts on every chunk): the last complete one wins,
		// never a sum.
		if c.Usage.PromptTokens.set && c.Usage.CompletionTokens.set {
			a.usage = &u
		} else if c.Usage.PromptTokens.set || c.Usage.CompletionTokens.set || c.Usage.TotalTokens.set {
			a.partialUsage = &u
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != nil && *ch.Index != 0 {
			continue // n>1: Odin asks for one choice and reads choice 0
		}
		if a.finished {
			// A repeated finish chunk must not add anything twice.
			continue
		}
		if err := a.delta(&ch.Delta); err != nil {
			return err
		}
		if err := a.delta(&ch.Message); err != nil {
			return err
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if *ch.FinishReason == "error" {
				return &Error{Kind: KindServer, Message: "the provider ended the stream with finish_reason \"error\""}
			}
			a.finish = *ch.FinishReason
			a.finished = true
		}
	}
	return nil
}

func (a *accumulator) delta(d *wireDelta) error {
	reasoning := ""
	switch {
	case d.ReasoningContent != nil && *d.ReasoningContent != "":
		reasoning = *d.ReasoningContent
	case d.Reasoning != nil:
		reasoning = *d.Reasoning
	}
	a.addReasoning(reasoning)
	if err := a.content(d.Content); err != nil {
		return err
	}
	if d.Refusal != nil && *d.Refusal != "" {
		// A refusal is the answer the user gets: it is text to every
		// consumer (streamed, and in Response.Text), and kept apart in
		// Response.Refusal for those that must tell.
		a.refusal.WriteString(*d.Refusal)
		a.addText(*d.Refusal)
	}
	for i := range d.ToolCalls {
		a.toolCall(&d.ToolCalls[i])
	}
	if f := d.FunctionCall; f != nil && (f.Name != "" || f.Arguments != "") {
		// The legacy format has one call per message and no id or index:
		// it is the no-index path of a tool call.
		a.toolCall(&wireToolCall{Function: *f})
	}
	return nil
}

func (a *accumulator) addText(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.onEvent(Event{Kind: EventText, Text: s})
}

func (a *accumulator) addReasoning(s string) {
	if s == "" {
		return
	}
	a.reasoning.WriteString(s)
	a.onEvent(Event{Kind: EventReasoning, Text: s})
}

// content handles content as a string, null, or an array of parts where
// "thinking" parts carry reasoning (Mistral Magistral).
func (a *accumulator) content(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return &Error{Kind: KindBadResponse, Message: "unparseable content " + snippet(raw), Err: err}
		}
		a.addText(s)
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(raw, &parts); err != nil {
			return &Error{Kind: KindBadResponse, Message: "unparseable content parts " + snippet(raw), Err: err}
		}
		for _, p := range parts {
			switch p.Type {
			case "thinking", "reasoning":
				a.addReasoning(p.Text)
				a.addReasoning(thinkingText(p.Thinking))
			default:
				a.addText(p.Text)
			}
		}
	default:
		return &Error{Kind: KindBadResponse, Message: "unexpected content " + snippet(raw)}
	}
	return nil
}

// thinkingText flattens a thinking value: a string or an array of parts.
func thinkingText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// toolCall folds one tool-call delta. Calls are matched by index when the
// provider sends one (any base, any order); without an index (Mistral, the
// legacy function_call) by id, else the delta continues the last call.
// Empty ids and names on continuation deltas never overwrite what came
// first. Relays get indexes wrong in two ways handled here: a second call
// under an index already used (a new id, or a new name once the first
// call's arguments are whole, starts a new call rather than merging), and a
// continuation fragment (no id, no name) under an index never seen, which
// continues the last call while that call's arguments are unfinished.
func (a *accumulator) toolCall(tc *wireToolCall) {
	var c *callAcc
	if tc.Index != nil {
		if pos, ok := a.byIndex[*tc.Index]; ok {
			c = a.calls[pos]
			if startsNewCall(c, tc) {
				c = nil
			}
		} else if tc.ID == "" && tc.Function.Name == "" && len(a.calls) > 0 && !a.calls[len(a.calls)-1].argsComplete() {
			c = a.calls[len(a.calls)-1]
			a.byIndex[*tc.Index] = len(a.calls) - 1
		}
		if c == nil {
			c = a.newCall()
			a.byIndex[*tc.Index] = len(a.calls) - 1
		}
	} else {
		if tc.ID != "" {
			for _, x := range a.calls {
				if x.id == tc.ID {
					c = x
					break
				}
			}
		} else if len(a.calls) > 0 {
			c = a.calls[len(a.calls)-1]
			if startsNewCall(c, tc) {
				c = nil
			}
		}
		if c == nil {
			c = a.newCall()
		}
	}
	if c.id == "" && tc.ID != "" {
		c.id = tc.ID
	}
	if c.name == "" && tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	c.addArgs(tc.Function.Arguments, a.maxArgs)
	if len(tc.Extra) > 0 {
		if c.extra == nil {
			c.extra = map[string]json.RawMessage{}
		}
		for k, v := range tc.Extra {
			c.extra[k] = json.RawMessage(v)
		}
	}
	if !c.announced && c.name != "" {
		c.announced = true
		if c.id == "" {
			c.id, c.synthetic = syntheticCallID(), true
		}
		a.onEvent(Event{Kind: EventToolCall, ToolCall: &ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}})
	}
}

// startsNewCall reports whether delta tc, matched to call c by its index
// (or, without an index, by being last), is in fact the start of another
// call: it carries an id different from c's real one, or, without an id, a
// name while c is already named and its arguments are whole. A bare repeat
// of c's name with no arguments is a trailing delta, not a call.
func startsNewCall(c *callAcc, tc *wireToolCall) bool {
	if tc.ID != "" {
		return c.id != "" && !c.synthetic && tc.ID != c.id
	}
	if tc.Function.Name == "" || c.name == "" || !c.argsComplete() {
		return false
	}
	return !(tc.Function.Name == c.name && tc.Function.Arguments == "")
}

func (a *accumulator) newCall() *callAcc {
	if n := len(a.calls); n > 0 {
		a.callDone(a.calls[n-1])
	}
	c := &callAcc{}
	a.calls = append(a.calls, c)
	return c
}

// callDone announces, once, that c's arguments are complete: the stream
// has moved on to a new call, and c's arguments are a whole JSON value.
// A call without a name, or whose arguments were dropped, is left to the
// response (it cannot run anyway).
func (a *accumulator) callDone(c *callAcc) {
	if c.done || !c.announced || c.dropped > 0 || !c.argsComplete() {
		return
	}
	c.done = true
	a.onEvent(Event{Kind: EventToolCallDone, ToolCall: &ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()}})
}

// syntheticCallID names a call whose provider sent no id; the id must be
// unique within the conversation because the tool message refers to it.
func syntheticCallID() string {
	return fmt.Sprintf("call_odin_%016x", rand.Uint64())
}

// complete reports whether the stream delivered a whole response.
func (a *accumulator) complete() bool { return a.finished || a.done }

// response builds the final Response; req is used to estimate usage when the
// provider reported none.
func (a *accumulator) response(req *Request) (*Response, error) {
	r := &Response{
		Model:     a.model,
		Text:      a.text.String(),
		Reasoning: a.reasoning.String(),
		Refusal:   a.refusal.String(),
	}
	for _, c := range a.calls {
		if c.id == "" {
			c.id = syntheticCallID()
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" || c.dropped > 0 {
			args = "{}"
		}
		tc := ToolCall{ID: c.id, Name: c.name, Arguments: args, Dropped: c.dropped}
		if len(c.extra) > 0 {
			// Map keys marshal sorted, so the bytes are stable.
			if b, err := json.Marshal(c.extra); err == nil {
				tc.Extra = b
			}
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	r.FinishReason = normalizeFinish(a.finish, len(r.ToolCalls) > 0)
	switch {
	case a.usage != nil:
		r.Usage, r.UsageReported = *a.usage, true
	case a.partialUsage != nil:
		r.Usage, r.UsageReported = *a.partialUsage, true
	default:
		r.Usage = estimateUsage(req, r)
	}
	if r.Text == "" && r.Reasoning == "" && r.Refusal == "" && len(r.ToolCalls) == 0 && r.FinishReason != FinishLength && r.FinishReason != FinishContentFilter {
		return nil, &Error{Kind: KindBadResponse, Message: "the model returned an empty response"}
	}
	return r, nil
}

// normalizeFinish maps provider finish reasons onto Odin's. Tool calls win
// over "stop" (several providers say stop after sending calls), but not over
// length or content_filter: calls cut by the token limit are incomplete and
// the caller must see that.
func normalizeFinish(raw string, hasCalls bool) FinishReason {
	var f FinishReason
	switch raw {
	case "length", "max_tokens", "model_length":
		f = FinishLength
	case "content_filter", "safety":
		f = FinishContentFilter
	case "tool_calls", "function_call", "tool_use":
		f = FinishToolCalls
	default: // stop, end_turn, eos, stop_sequence, absent
		f = FinishStop
	}
	switch {
	case hasCalls && f == FinishStop:
		f = FinishToolCalls
	case !hasCalls && f == FinishToolCalls:
		f = FinishStop
	}
	return f
}

func estimateUsage(req *Request, r *Response) Usage {
	p := EstimateMessages(req.Messages) + EstimateTools(req.Tools)
	c := EstimateTokens(r.Text) + EstimateTokens(r.Reasoning) // Text includes the refusal
	for _, tc := range r.ToolCalls {
		c += EstimateTokens(tc.Name) + EstimateTokens(tc.Arguments)
	}
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

// snippet quotes the start of b for an error message.
func snippet(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
