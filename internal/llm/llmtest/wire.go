package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/odin-code/odin/internal/llm"
)

// defaultChunkSize is how many runes of text or arguments go in one delta
// when a step does not say: small enough that every test exercises
// accumulation across deltas.
const defaultChunkSize = 4

// turn is a step resolved for one request: ids filled in, usage decided.
type turn struct {
	step  Step
	model string
	id    string // completion id
	calls []llm.ToolCall
	// extras are the scripted extra fields of each call, by position.
	extras []map[string]any
	usage  llm.Usage
	// includeUsage is whether the request asked for a usage chunk.
	includeUsage bool
	created      int64
}

func newTurn(st Step, model, pool string, idx int, created int64, prompt int64, includeUsage bool) *turn {
	t := &turn{step: st, model: model, id: fmt.Sprintf("chatcmpl-%s-%d", pool, idx), includeUsage: includeUsage, created: created}
	for n, tc := range st.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%s_%d_%d", pool, idx, n)
		}
		t.calls = append(t.calls, llm.ToolCall{ID: id, Name: tc.Name, Arguments: tc.Arguments.String()})
		t.extras = append(t.extras, tc.Extra)
	}
	if st.Usage != nil {
		t.usage = *st.Usage
		if t.usage.TotalTokens == 0 {
			t.usage.TotalTokens = t.usage.PromptTokens + t.usage.CompletionTokens
		}
	} else {
		c := llm.EstimateTokens(st.Text) + llm.EstimateTokens(st.Reasoning) + llm.EstimateTokens(st.Refusal)
		for _, tc := range t.calls {
			c += llm.EstimateTokens(tc.Name) + llm.EstimateTokens(tc.Arguments)
		}
		t.usage = llm.Usage{PromptTokens: prompt, CompletionTokens: c, TotalTokens: prompt + c}
	}
	return t
}

// finishReason is what the step's finish chunk says.
func (t *turn) finishReason() string {
	switch {
	case t.step.FinishReason != "":
		return t.step.FinishReason
	case len(t.calls) > 0 && t.step.Quirks.LegacyFunctionCall:
		return "function_call"
	case len(t.calls) > 0 && !t.step.Quirks.StopWithTools:
		return "tool_calls"
	}
	return "stop"
}

func (t *turn) chunkSize() int {
	if t.step.ChunkSize > 0 {
		return t.step.ChunkSize
	}
	return defaultChunkSize
}

// pieces splits s into runs of n runes.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	r := []rune(s)
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// obj is a JSON object as the wire chunks are built.
type obj map[string]any

// sseEvent is one thing written to the stream: a comment or a data payload,
// given as bytes or as a chunk encoded when it is written (so that the
// client reads the first chunks while the server encodes the next).
type sseEvent struct {
	comment string
	data    []byte
	chunk   any
}

func dataEvent(v any) sseEvent { return sseEvent{chunk: v} }

// isData reports whether the event is a data payload.
func (e sseEvent) isData() bool { return e.data != nil || e.chunk != nil }

// payload is the event's data.
func (e sseEvent) payload() []byte {
	if e.data != nil {
		return e.data
	}
	return encode(e.chunk)
}

// encode writes JSON the way providers do, without escaping <, > and &.
// The chunks are trees of obj, []any, strings and numbers, written here
// directly: encoding/json's reflective map encoder made the server's own
// CPU a large share of what a fan-out benchmark measures. Anything else is
// handed to encoding/json; the output is the same bytes either way.
func encode(v any) []byte {
	b, ok := appendJSON(make([]byte, 0, 256), v)
	if !ok {
		// Every value here is built from maps, strings and numbers.
		return []byte(`{"error":{"message":"llmtest: cannot encode chunk"}}`)
	}
	return b
}

// appendJSON appends v's JSON to b, keys sorted as encoding/json sorts them.
func appendJSON(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case obj:
		return appendObject(b, x)
	case map[string]any:
		return appendObject(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, false
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), true
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping. Non-ASCII text goes through
// encoding/json itself (its rules for invalid UTF-8 and U+2028).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(b, mustString(s)...)
		}
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// mustString is s encoded by encoding/json without HTML escaping.
func mustString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// events plans the whole stream of the turn, faults and quirks included,
// except CutAfter, which the writer applies.
func (t *turn) events() []sseEvent {
	q := t.step.Quirks
	choices := max(q.Choices, 1)
	deltas := t.deltas()

	var out []sseEvent
	if q.Comments {
		out = append(out, sseEvent{comment: "OPENROUTER PROCESSING"}, sseEvent{comment: "OPENROUTER PROCESSING"})
	}
	if q.EmptyChoicesFirst {
		out = append(out, dataEvent(obj{
			"id": "", "object": "", "model": "", "created": 0, "choices": []any{},
			"prompt_filter_results": []any{obj{"prompt_index": 0, "content_filter_results": obj{
				"hate": obj{"filtered": false, "severity": "safe"},
			}}},
		}))
	}
	for i, d := range deltas {
		for k := range choices {
			c := t.chunk([]any{t.choice(k, variant(d, k), nil)})
			if q.UsageEveryChunk && k == 0 {
				u := t.usage
				u.CompletionTokens = t.usage.CompletionTokens * int64(i+1) / int64(len(deltas)+1)
				u.TotalTokens = u.PromptTokens + u.CompletionTokens
				c["usage"] = t.wireUsage(u)
			}
			out = append(out, dataEvent(c))
		}
	}

	if t.step.ErrorMidstream {
		if n := t.step.CutAfter; n > 0 {
			out = keepData(out, n)
		}
		e := t.errorBody(http.StatusInternalServerError)
		if t.step.ErrorFormat == "object" {
			// vLLM: the error is the chunk, with a numeric code, and the
			// stream still ends with [DONE].
			out = append(out, dataEvent(obj{"object": "error", "message": e.Message, "type": e.Type, "param": nil, "code": http.StatusInternalServerError}))
			return append(out, sseEvent{data: []byte("[DONE]")})
		}
		return append(out, dataEvent(obj{"error": e}))
	}

	finish := t.finishReason()
	sendUsage := !q.NoUsage
	usageOnFinish := sendUsage && (q.UsageOnFinish || q.UsageTwice || q.UsageEveryChunk)
	usageTrailing := sendUsage && !q.UsageOnFinish && (t.includeUsage || q.UsageTwice)
	for rep := 0; rep < 1 || (q.FinishTwice && rep < 2); rep++ {
		if q.Comments {
			out = append(out, sseEvent{comment: "OPENROUTER PROCESSING"})
		}
		for k := range choices {
			c := t.chunk([]any{t.choice(k, obj{}, &finish)})
			if usageOnFinish && k == choices-1 {
				c["usage"] = t.wireUsage(t.usage)
			}
			out = append(out, dataEvent(c))
		}
	}
	if usageTrailing {
		c := t.chunk([]any{})
		c["usage"] = t.wireUsage(t.usage)
		out = append(out, dataEvent(c))
	}
	if !t.step.NoDone {
		out = append(out, sseEvent{data: []byte("[DONE]")})
	}
	return out
}

// keepData keeps events up to and including the n-th data event.
func keepData(evs []sseEvent, n int) []sseEvent {
	seen := 0
	for i, e := range evs {
		if e.isData() {
			seen++
			if seen == n {
				return evs[:i+1]
			}
		}
	}
	return evs
}

func (t *turn) chunk(choices []any) obj {
	return obj{"id": t.id, "object": "chat.completion.chunk", "created": t.created, "model": t.model, "choices": choices}
}

func (t *turn) choice(k int, delta obj, finish *string) obj {
	c := obj{"index": k, "delta": delta}
	switch {
	case finish != nil:
		c["finish_reason"] = *finish
	case !t.step.Quirks.NoFinishKey:
		c["finish_reason"] = nil
	}
	return c
}

// variant makes choice k's version of a delta: other choices say other
// things, so a client that mixes choices up is caught.
func variant(d obj, k int) obj {
	if k == 0 {
		return d
	}
	v := obj{}
	for key, val := range d {
		switch x := val.(type) {
		case string:
			if key == "role" {
				v[key] = x
			} else {
				v[key] = fmt.Sprintf("<choice %d>", k)
			}
		case []any:
			if key == "tool_calls" {
				v[key] = []any{obj{"index": 0, "id": fmt.Sprintf("call_choice_%d", k), "type": "function",
					"function": obj{"name": fmt.Sprintf("choice_%d", k), "arguments": "{}"}}}
			}
		default:
			v[key] = val
		}
	}
	return v
}

// deltas are the choice-0 deltas before the finish chunk.
func (t *turn) deltas() []obj {
	q := t.step.Quirks
	n := t.chunkSize()
	role := obj{"role": "assistant", "content": ""}
	if q.NullContent {
		role["content"] = nil
	}
	out := []obj{role}
	for _, p := range pieces(t.step.Reasoning, n) {
		var d obj
		switch q.ReasoningField {
		case "reasoning":
			d = obj{"reasoning": p}
		case "thinking_parts":
			d = obj{"content": []any{obj{"type": "thinking", "thinking": []any{obj{"type": "text", "text": p}}}}}
		default:
			d = obj{"reasoning_content": p}
		}
		if _, has := d["content"]; q.NullContent && !has {
			d["content"] = nil
		}
		out = append(out, d)
	}
	for _, p := range pieces(t.step.Refusal, n) {
		out = append(out, obj{"refusal": p})
	}
	for _, p := range pieces(t.step.Text, n) {
		if q.ContentParts {
			out = append(out, obj{"content": []any{obj{"type": "text", "text": p}}})
		} else {
			out = append(out, obj{"content": p})
		}
	}
	for i, tc := range t.calls {
		if q.LegacyFunctionCall {
			out = append(out, legacyDeltas(tc, t.chunkSize())...)
			continue
		}
		out = append(out, t.callDeltas(i, tc)...)
	}
	return out
}

// legacyDeltas stream a call in the pre-tools function_call format.
func legacyDeltas(tc llm.ToolCall, n int) []obj {
	out := []obj{{"content": nil, "function_call": obj{"name": tc.Name, "arguments": ""}}}
	for _, p := range pieces(tc.Arguments, n) {
		out = append(out, obj{"function_call": obj{"arguments": p}})
	}
	return out
}

func (t *turn) callDeltas(i int, tc llm.ToolCall) []obj {
	q := t.step.Quirks
	index := q.IndexBase + i
	if q.ReuseIndex {
		index = q.IndexBase
	}
	fragments := 0
	wrap := func(call obj) obj {
		if !q.NoIndex {
			call["index"] = index
			if q.ContinuationOtherIndex && fragments > 1 {
				call["index"] = index + 1
			}
		}
		d := obj{"tool_calls": []any{call}}
		if q.NullContent {
			d["content"] = nil
		}
		return d
	}
	head := func(args *string) obj {
		fn := obj{"name": tc.Name}
		if args != nil {
			fn["arguments"] = *args
		}
		c := obj{"id": tc.ID, "function": fn}
		if q.NoCallID {
			delete(c, "id")
		}
		if !q.NoIndex {
			c["type"] = "function"
		}
		for k, v := range t.extras[i] {
			c[k] = v
		}
		return c
	}
	args := tc.Arguments
	if q.ToolCallWhole {
		return []obj{wrap(head(&args))}
	}
	var out []obj
	if q.NameWithoutArguments {
		out = append(out, wrap(head(nil)))
	} else {
		empty := ""
		out = append(out, wrap(head(&empty)))
	}
	for _, p := range pieces(args, t.chunkSize()) {
		fragments++
		var c obj
		switch {
		case q.RepeatID:
			c = head(&p)
		default:
			c = obj{"function": obj{"arguments": p}}
			if q.EmptyID {
				c["id"] = ""
				c["type"] = "function"
			}
			if q.EmptyName {
				c["function"].(obj)["name"] = ""
				c["type"] = "function"
			}
		}
		out = append(out, wrap(c))
	}
	return out
}

func (t *turn) wireUsage(u llm.Usage) obj {
	w := obj{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
	if u.CachedTokens > 0 {
		w["prompt_tokens_details"] = obj{"cached_tokens": u.CachedTokens}
	}
	if u.ReasoningTokens > 0 {
		w["completion_tokens_details"] = obj{"reasoning_tokens": u.ReasoningTokens}
	}
	if t.step.Quirks.UsageCostObject {
		w["cost"] = obj{"usd": 0.00017424, "hypercredits": 0.0034848}
	}
	return w
}

// completion is the non-streamed body of the turn.
func (t *turn) completion() obj {
	msg := obj{"role": "assistant", "content": t.step.Text}
	if t.step.Text == "" {
		msg["content"] = nil
	}
	if t.step.Reasoning != "" {
		msg["reasoning_content"] = t.step.Reasoning
	}
	if t.step.Refusal != "" {
		msg["refusal"] = t.step.Refusal
	}
	if len(t.calls) > 0 {
		calls := make([]any, len(t.calls))
		for i, tc := range t.calls {
			calls[i] = obj{"id": tc.ID, "type": "function", "function": obj{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	body := obj{
		"id": t.id, "object": "chat.completion", "created": t.created, "model": t.model,
		"choices": []any{obj{"index": 0, "message": msg, "finish_reason": t.finishReason()}},
	}
	if !t.step.Quirks.NoUsage {
		body["usage"] = t.wireUsage(t.usage)
	}
	return body
}

// errorBody is the step's error object, or a plausible default for status.
func (t *turn) errorBody(status int) ErrorBody {
	if t.step.Error != nil {
		return *t.step.Error
	}
	return defaultError(status)
}

func defaultError(status int) ErrorBody {
	switch {
	case status == http.StatusTooManyRequests:
		return ErrorBody{Message: "Rate limit reached (scripted). Please try again later.", Type: "requests", Code: "rate_limit_exceeded"}
	case status == http.StatusUnauthorized:
		return ErrorBody{Message: "Incorrect API key provided (scripted).", Type: "invalid_request_error", Code: "invalid_api_key"}
	case status == http.StatusForbidden:
		return ErrorBody{Message: "Forbidden (scripted).", Type: "invalid_request_error", Code: "forbidden"}
	case status >= 500:
		return ErrorBody{Message: "The server had an error while processing your request (scripted).", Type: "server_error"}
	default:
		return ErrorBody{Message: fmt.Sprintf("%s (scripted).", http.StatusText(status)), Type: "invalid_request_error"}
	}
}

// lastTurnTexts are what `when` is matched against: the last message and
// every tool result after the last assistant message. The Orchestrator's
// first user message opens with its role, ended by conversationHeading:
// only what follows is the conversation's, so a step's `when` is not met
// by a word of the role.
func lastTurnTexts(msgs []llm.Message) []string {
	if len(msgs) == 0 {
		return nil
	}
	last := msgs[len(msgs)-1].Content
	if _, said, ok := strings.Cut(last, conversationHeading); ok {
		last = said
	}
	texts := []string{last}
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != llm.RoleAssistant; i-- {
		if msgs[i].Role == llm.RoleTool {
			texts = append(texts, msgs[i].Content)
		}
	}
	return texts
}

// conversationHeading parts the Orchestrator's role from the conversation
// in its first user message (as actors lays it out).
const conversationHeading = "\n# Conversation\n"

// exhausted explains that the script has nothing left for a request.
func exhausted(agent, pool string, msgs []llm.Message) string {
	who := fmt.Sprintf("agent %q", agent)
	if pool != agent {
		who += fmt.Sprintf(" (served from %q)", pool)
	}
	last := "no messages"
	if len(msgs) > 0 {
		m := msgs[len(msgs)-1]
		last = fmt.Sprintf("last message (%s): %q", m.Role, clip(m.Content, 300))
	}
	return fmt.Sprintf("llmtest: script exhausted: no unused step matches for %s; %s", who, strings.TrimSpace(last))
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// appendObject appends a JSON object, keys sorted as encoding/json sorts them.
func appendObject(b []byte, x map[string]any) ([]byte, bool) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendJSON(b, x[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}
