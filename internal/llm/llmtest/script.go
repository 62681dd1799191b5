package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"go.yaml.in/yaml/v3"
)

// DefaultAgent receives requests without an X-Odin-Agent header and those of
// agents the script has no steps for.
const DefaultAgent = "default"

// DefaultModel is the model id the server reports when the script names none.
const DefaultModel = "scripted-model"

// Script is what the scripted model answers, per agent. Build one in Go
// (NewScript, Add) or load it from YAML or JSON (LoadScript, ParseScript):
//
//	model: scripted-model
//	agents:
//	  orchestrator:
//	    - tool_calls: [{name: LS, arguments: {path: "."}}]
//	    - when: "main.go"
//	      text: "The project has one file."
//	  default:
//	    - text: "hello"
//
// A top-level `steps:` list is shorthand for the default agent's steps.
type Script struct {
	// Model is reported in responses and by GET /v1/models.
	Model string `json:"model,omitempty"`
	// Agents maps an agent name to its steps, consumed in order.
	Agents map[string][]Step `json:"agents,omitempty"`
	// Steps are appended to the default agent's steps.
	Steps []Step `json:"steps,omitempty"`
}

// Step is one scripted model turn (or one injected fault).
type Step struct {
	// When, if set, makes the step eligible only for a request whose last
	// message, or a tool result of its last turn, contains this substring.
	When string `json:"when,omitempty"`

	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	Refusal   string     `json:"refusal,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason defaults to tool_calls when the step has calls, else stop.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage defaults to an estimate from the request and the output.
	Usage *llm.Usage `json:"usage,omitempty"`

	// Latency passes before the first byte; ChunkDelay between chunks.
	Latency    Duration `json:"latency,omitempty"`
	ChunkDelay Duration `json:"chunk_delay,omitempty"`
	// ChunkSize splits text, reasoning and arguments into pieces of this
	// many runes. Default 4.
	ChunkSize int `json:"chunk_size,omitempty"`
	// Hold parks the response until Release(Hold) is called.
	Hold string `json:"hold,omitempty"`

	// Status, when set, answers with this HTTP status and an error body
	// (Error, or a default for the status) instead of a completion.
	Status int `json:"status,omitempty"`
	// RetryAfter is sent as the Retry-After header: seconds or an HTTP date.
	RetryAfter FlexString `json:"retry_after,omitempty"`
	// Headers are extra response headers (e.g. retry-after-ms).
	Headers map[string]string `json:"headers,omitempty"`
	// Error is the error object of a Status or ErrorMidstream step.
	Error *ErrorBody `json:"error,omitempty"`
	// Body, with Status, is sent verbatim instead of a JSON error.
	Body string `json:"body,omitempty"`
	// CutAfter closes the connection after this many SSE events: no
	// finish, no [DONE].
	CutAfter int `json:"cut_after,omitempty"`
	// ErrorMidstream sends an error object instead of the finish chunk
	// (after CutAfter events when that is set) and ends the stream.
	ErrorMidstream bool `json:"error_midstream,omitempty"`
	// ErrorFormat is the shape of the ErrorMidstream error: "" sends
	// {"error": {...}} and ends the stream (OpenAI); "object" sends the
	// error's fields at the top level with "object": "error" and then
	// [DONE], as vLLM does, so the stream looks finished.
	ErrorFormat string `json:"error_format,omitempty"`
	// StallAfter stops sending after this many SSE data events and keeps
	// the connection open, silent, until the client gives up.
	StallAfter int `json:"stall_after,omitempty"`
	// NoDone omits the final "data: [DONE]".
	NoDone bool `json:"no_done,omitempty"`
	// Quirks reproduce the stream shapes of real providers.
	Quirks Quirks `json:"quirks,omitzero"`
}

// ToolCall is a scripted function call.
type ToolCall struct {
	// ID defaults to call_<agent>_<step>_<n>.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments: an object is sent as its JSON encoding; a string is sent
	// verbatim, so a test can send invalid JSON. Absent means {}.
	Arguments Arguments `json:"arguments,omitzero"`
	// Extra are fields sent on the call's first delta next to id and
	// function, e.g. {extra_content: {google: {thought_signature: s}}}
	// (Gemini). The server then requires every later request that
	// replays the call to carry them back unchanged, answering 400 like
	// Gemini does otherwise.
	Extra map[string]any `json:"extra,omitempty"`
}

// ErrorBody is an OpenAI-style error object.
type ErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Code    string `json:"code,omitempty"`
	Param   string `json:"param,omitempty"`
}

// Quirks reproduce stream shapes seen from real providers. In YAML they are
// a map (`quirks: {no_index: true, index_base: 1}`) or a list of names
// (`quirks: [tool_call_whole, usage_twice]`).
type Quirks struct {
	// ToolCallWhole sends each call (id, name, all arguments) in one delta.
	ToolCallWhole bool `json:"tool_call_whole,omitempty"`
	// NoIndex omits index and type from tool-call deltas (Mistral).
	NoIndex bool `json:"no_index,omitempty"`
	// IndexBase numbers tool calls from this value (1: Anthropic-compat).
	IndexBase int `json:"index_base,omitempty"`
	// RepeatID repeats id, type and name on every delta of a call.
	RepeatID bool `json:"repeat_id,omitempty"`
	// EmptyID sends "id": "" on continuation deltas (Alibaba).
	EmptyID bool `json:"empty_id,omitempty"`
	// EmptyName sends "name": "" on continuation deltas (Mistral/GLM).
	EmptyName bool `json:"empty_name,omitempty"`
	// NameWithoutArguments omits the arguments key from a call's first
	// delta (Claude proxies).
	NameWithoutArguments bool `json:"name_without_arguments,omitempty"`
	// StopWithTools says finish_reason "stop" although calls were sent.
	StopWithTools bool `json:"stop_with_tools,omitempty"`
	// FinishTwice sends the finish chunk twice (OpenRouter, Avian).
	FinishTwice bool `json:"finish_twice,omitempty"`
	// NoFinishKey leaves finish_reason out (rather than null) before the
	// finish chunk (xAI, Z.ai).
	NoFinishKey bool `json:"no_finish_key,omitempty"`
	// UsageTwice sends usage on the finish chunk and again on a trailing
	// choices: [] chunk (Groq).
	UsageTwice bool `json:"usage_twice,omitempty"`
	// UsageOnFinish sends usage only on the finish chunk (Z.ai, Mistral).
	UsageOnFinish bool `json:"usage_on_finish,omitempty"`
	// UsageEveryChunk sends cumulative usage on every chunk (vLLM with
	// continuous usage stats); only the last one is the total.
	UsageEveryChunk bool `json:"usage_every_chunk,omitempty"`
	// NoUsage sends no usage at all, even when asked to.
	NoUsage bool `json:"no_usage,omitempty"`
	// UsageCostObject adds usage.cost as an object (routers).
	UsageCostObject bool `json:"usage_cost_object,omitempty"`
	// EmptyChoicesFirst starts with a choices: [] chunk carrying only
	// prompt_filter_results (Azure).
	EmptyChoicesFirst bool `json:"empty_choices_first,omitempty"`
	// Comments sends SSE comment keep-alives (OpenRouter).
	Comments bool `json:"comments,omitempty"`
	// ReasoningField carries reasoning: reasoning_content (default),
	// reasoning (OpenRouter), or thinking_parts (Mistral content array).
	ReasoningField string `json:"reasoning_field,omitempty"`
	// ContentParts sends text as an array of {type: text} parts.
	ContentParts bool `json:"content_parts,omitempty"`
	// Choices > 1 interleaves that many choices; the others say different
	// things, so a client mixing them up produces garbage.
	Choices int `json:"choices,omitempty"`
	// NullContent sends content: null next to reasoning and tool deltas.
	NullContent bool `json:"null_content,omitempty"`
	// LegacyFunctionCall sends calls as delta.function_call (no id, no
	// index) with finish_reason "function_call", the pre-tools format.
	LegacyFunctionCall bool `json:"legacy_function_call,omitempty"`
	// ReuseIndex sends every call under the same index (IndexBase), as
	// some relays do.
	ReuseIndex bool `json:"reuse_index,omitempty"`
	// NoCallID sends calls without an id.
	NoCallID bool `json:"no_call_id,omitempty"`
	// ContinuationOtherIndex sends each call's argument fragments after
	// the first under the next index, as broken relays do.
	ContinuationOtherIndex bool `json:"continuation_other_index,omitempty"`
}

// UnmarshalJSON accepts an object or a list of quirk names and objects.
func (q *Quirks) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		merged := map[string]json.RawMessage{}
		for _, it := range items {
			var name string
			if json.Unmarshal(it, &name) == nil {
				merged[name] = json.RawMessage("true")
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(it, &m); err != nil {
				return fmt.Errorf("quirks: %s is neither a name nor a map", it)
			}
			for k, v := range m {
				merged[k] = v
			}
		}
		var err error
		if b, err = json.Marshal(merged); err != nil {
			return err
		}
	}
	type plain Quirks
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(q)); err != nil {
		return fmt.Errorf("quirks: %w", err)
	}
	switch q.ReasoningField {
	case "", "reasoning_content", "reasoning", "thinking_parts":
	default:
		return fmt.Errorf("quirks: reasoning_field %q is not reasoning_content, reasoning or thinking_parts", q.ReasoningField)
	}
	return nil
}

// Duration is a time.Duration written as a Go duration string ("250ms").
type Duration time.Duration

// UnmarshalJSON accepts a duration string or 0.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		if string(bytes.TrimSpace(b)) == "0" {
			*d = 0
			return nil
		}
		return fmt.Errorf("duration %s: write it as a string such as \"250ms\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// FlexString is a string that may be written as a number in YAML or JSON.
type FlexString string

// UnmarshalJSON accepts a string or a number.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = FlexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("expected a string or a number, got %s", b)
	}
	*f = FlexString(n.String())
	return nil
}

// Arguments are a tool call's arguments as sent on the wire. value holds the
// decoded object when the script gave one, so that variables can be
// substituted in its strings before it is encoded.
type Arguments struct {
	text  string
	value any
	set   bool
	err   error // from Args; reported by Validate
}

// Args returns arguments that are the JSON encoding of v.
func Args(v any) Arguments {
	b, err := json.Marshal(v)
	if err != nil {
		return Arguments{text: "{}", set: true, err: err}
	}
	var generic any
	_ = json.Unmarshal(b, &generic)
	return Arguments{text: string(b), value: generic, set: true}
}

// RawArgs returns arguments sent verbatim, valid JSON or not.
func RawArgs(s string) Arguments { return Arguments{text: s, set: true} }

// String returns the arguments as sent: {} when none were given.
func (a Arguments) String() string {
	if !a.set {
		return "{}"
	}
	return a.text
}

// IsZero reports whether no arguments were given.
func (a Arguments) IsZero() bool { return !a.set }

// UnmarshalJSON keeps a string verbatim and encodes anything else.
func (a *Arguments) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = RawArgs(s)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = Args(v)
	return nil
}

// MarshalJSON writes an object as itself and verbatim text as a string.
func (a Arguments) MarshalJSON() ([]byte, error) {
	if a.value != nil {
		return []byte(a.text), nil
	}
	return json.Marshal(a.text)
}

// NewScript returns an empty script.
func NewScript() *Script { return &Script{Agents: map[string][]Step{}} }

// Add appends steps to agent's list and returns s.
func (s *Script) Add(agent string, steps ...Step) *Script {
	if s.Agents == nil {
		s.Agents = map[string][]Step{}
	}
	s.Agents[agent] = append(s.Agents[agent], steps...)
	return s
}

// Reply is a step answering with text.
func Reply(text string) Step { return Step{Text: text} }

// Calls is a step requesting tool calls.
func Calls(calls ...ToolCall) Step { return Step{ToolCalls: calls} }

// Call is a tool call whose arguments are the JSON encoding of args, or
// args verbatim when it is a string.
func Call(name string, args any) ToolCall {
	if s, ok := args.(string); ok {
		return ToolCall{Name: name, Arguments: RawArgs(s)}
	}
	return ToolCall{Name: name, Arguments: Args(args)}
}

// LoadScript reads a script from a .yaml, .yml or .json file.
func LoadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	s, err := ParseScript(b)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %s: %w", filepath.Base(path), err)
	}
	return s, nil
}

// ParseScript parses a script written in YAML or JSON (JSON is YAML).
// Unknown keys are errors, so a typo does not silently change a test.
func ParseScript(b []byte) (*Script, error) {
	var generic any
	if err := yaml.Unmarshal(b, &generic); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if generic == nil {
		return nil, errors.New("parse script: empty script")
	}
	// YAML is converted to JSON so that one set of struct tags and
	// decoders serves both formats.
	js, err := json.Marshal(jsonable(generic))
	if err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	s := &Script{}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if len(s.Steps) > 0 {
		s.Add(DefaultAgent, s.Steps...)
		s.Steps = nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// jsonable turns what yaml.v3 decodes (map[any]any in nested maps with
// non-string keys) into values encoding/json accepts.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// Validate reports steps that cannot be served.
func (s *Script) Validate() error {
	if s == nil {
		return errors.New("llmtest: nil script")
	}
	var errs []error
	for _, agent := range s.agentNames() {
		for i, st := range s.Agents[agent] {
			where := fmt.Sprintf("agents.%s[%d]", agent, i)
			if st.Status != 0 && (st.Status < 400 || st.Status > 599) {
				errs = append(errs, fmt.Errorf("%s: status %d is not an HTTP error status", where, st.Status))
			}
			if st.ChunkSize < 0 || st.CutAfter < 0 || st.StallAfter < 0 {
				errs = append(errs, fmt.Errorf("%s: chunk_size, cut_after and stall_after must not be negative", where))
			}
			if st.ErrorFormat != "" && st.ErrorFormat != "object" {
				errs = append(errs, fmt.Errorf("%s: error_format %q is not \"\" or \"object\"", where, st.ErrorFormat))
			}
			if st.Quirks.LegacyFunctionCall && len(st.ToolCalls) > 1 {
				errs = append(errs, fmt.Errorf("%s: legacy_function_call carries one call, not %d", where, len(st.ToolCalls)))
			}
			for j, tc := range st.ToolCalls {
				if tc.Name == "" {
					errs = append(errs, fmt.Errorf("%s.tool_calls[%d]: no name", where, j))
				}
				if tc.Arguments.err != nil {
					errs = append(errs, fmt.Errorf("%s.tool_calls[%d]: arguments: %w", where, j, tc.Arguments.err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Script) agentNames() []string {
	names := make([]string, 0, len(s.Agents))
	for k := range s.Agents {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

var (
	varRef  = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// WithVars returns a copy of s in which every {{name}} in a string is
// replaced by vars[name]. A reference to a name not in vars is an error,
// so a demo never runs with a placeholder left in a path.
func (s *Script) WithVars(vars map[string]string) (*Script, error) {
	var missing []string
	sub := func(str string) string {
		return varRef.ReplaceAllStringFunc(str, func(m string) string {
			name := varRef.FindStringSubmatch(m)[1]
			v, ok := vars[name]
			if !ok {
				if !slices.Contains(missing, name) {
					missing = append(missing, name)
				}
				return m
			}
			return v
		})
	}
	out := &Script{Model: sub(s.Model), Agents: map[string][]Step{}}
	for agent, steps := range s.Agents {
		cp := make([]Step, len(steps))
		for i, st := range steps {
			st.When, st.Text, st.Reasoning, st.Refusal = sub(st.When), sub(st.Text), sub(st.Reasoning), sub(st.Refusal)
			st.FinishReason, st.Hold, st.Body = sub(st.FinishReason), sub(st.Hold), sub(st.Body)
			st.RetryAfter = FlexString(sub(string(st.RetryAfter)))
			if st.Error != nil {
				e := *st.Error
				e.Message, e.Type, e.Code, e.Param = sub(e.Message), sub(e.Type), sub(e.Code), sub(e.Param)
				st.Error = &e
			}
			if st.Headers != nil {
				h := make(map[string]string, len(st.Headers))
				for k, v := range st.Headers {
					h[k] = sub(v)
				}
				st.Headers = h
			}
			calls := make([]ToolCall, len(st.ToolCalls))
			for j, tc := range st.ToolCalls {
				tc.ID, tc.Name = sub(tc.ID), sub(tc.Name)
				switch {
				case tc.Arguments.value != nil:
					tc.Arguments = Args(subValue(tc.Arguments.value, sub))
				case tc.Arguments.set:
					tc.Arguments = RawArgs(sub(tc.Arguments.text))
				}
				calls[j] = tc
			}
			if st.ToolCalls == nil {
				calls = nil
			}
			st.ToolCalls = calls
			cp[i] = st
		}
		out.Agents[sub(agent)] = cp
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("llmtest: script uses undefined variables: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func subValue(v any, sub func(string) string) any {
	switch x := v.(type) {
	case string:
		return sub(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = subValue(e, sub)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = subValue(e, sub)
		}
		return l
	}
	return v
}

// ParseVars turns "name=value" pairs into a map.
func ParseVars(pairs []string) (map[string]string, error) {
	vars := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !varName.MatchString(k) {
			return nil, fmt.Errorf("variable %s: want name=value with a name of letters, digits and _", strconv.Quote(p))
		}
		vars[k] = v
	}
	return vars, nil
}
