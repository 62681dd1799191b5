package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/messages"
)

// Class groups tools by what they can do; modes and permissions are
// expressed in classes.
type Class string

// Tool classes.
const (
	ClassRead    Class = "read"    // reads the workspace, changes nothing
	ClassWrite   Class = "write"   // creates or changes files
	ClassExecute Class = "execute" // runs commands
	ClassWeb     Class = "web"     // reaches the network
	ClassSpawn   Class = "spawn"   // starts another agent
	ClassMCP     Class = "mcp"     // a tool of an MCP server: its effect is the server's
)

// Info describes a tool to models and users.
type Info struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Class       Class           `json:"class"`
	Schema      json.RawMessage `json:"input_schema"`
	// ReadOnly is an MCP server's claim (readOnlyHint) that the tool
	// changes nothing; read-only modes offer only such MCP tools.
	ReadOnly bool `json:"read_only,omitempty"`
}

// Result is what a tool call returns to the model.
type Result struct {
	// Output is the text the model sees.
	Output string
	// IsError marks a failure the model can act on (bad argument, no
	// match, file not read first, permission denied).
	IsError bool
	// Denied is set when a permission rule refused the call.
	Denied bool
	// Files are the absolute paths the call created or changed.
	Files []string
	// Images are pictures the model sees with Output (an MCP tool's image
	// content); a model that takes no images sees their labels.
	Images []messages.Image
	// Meta carries structured data for Odin itself (never shown to the
	// model): a todo list, a specialist's report, a command's exit code.
	Meta any
}

// Errorf returns an error Result whose output is the formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is a model-callable tool.
type Tool interface {
	Info() Info
	// Run executes the tool with raw JSON input. Bad input yields an error
	// Result, never a panic or a Go error.
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Handler is the typed body of a tool built with New.
type Handler[In any] func(ctx context.Context, env *Env, in In) (Result, error)

// Option adjusts a tool built with New.
type Option func(*jsonschema.Schema)

// WithSchema lets a tool refine its derived schema (enums, bounds) before it
// is resolved. fn receives the root object schema.
func WithSchema(fn func(s *jsonschema.Schema)) Option { return Option(fn) }

type typed[In any] struct {
	info    Info
	opts    []Option
	handler Handler[In]

	// The resolved schema validates every call's input. Resolving costs
	// more than deriving, and a session builds every tool while a run
	// calls few, so it happens on a tool's first call.
	once     sync.Once
	resolved *jsonschema.Resolved
	err      error
}

// New builds a Tool whose input is In. The JSON schema is derived from In
// once (json tags give names and optionality, jsonschema tags give
// descriptions) and every call's input is validated against it before the
// handler runs. It panics if In cannot be described, which is a programming
// error caught by the schema golden test.
func New[In any](name string, class Class, description string, h Handler[In], opts ...Option) Tool {
	t := &typed[In]{info: Info{Name: name, Description: strings.TrimSpace(description), Class: class}, opts: opts, handler: h}
	raw, err := t.derive()
	if err != nil {
		panic(fmt.Sprintf("tool: schema for %s: %v", name, err))
	}
	t.info.Schema = raw
	return t
}

// NewPrecomputed is New with In's schema given as New would derive it
// (schema, compact JSON), so that building a tool derives nothing: the
// built-in tools ship their schemas this way, and a golden test holds each
// equal to DerivedSchema. The schema that validates calls is still derived
// from In, on the first call.
func NewPrecomputed[In any](name string, class Class, description string, schema json.RawMessage, h Handler[In], opts ...Option) Tool {
	return &typed[In]{info: Info{Name: name, Description: strings.TrimSpace(description), Class: class, Schema: schema}, opts: opts, handler: h}
}

// DerivedSchema derives, resolves and returns the schema of a tool built
// with New or NewPrecomputed, as New sends it to models; ok is false for
// any other tool.
func DerivedSchema(t Tool) (raw json.RawMessage, ok bool, err error) {
	d, ok := t.(interface {
		derive() (json.RawMessage, error)
		resolve() (*jsonschema.Resolved, error)
	})
	if !ok {
		return nil, false, nil
	}
	if _, err := d.resolve(); err != nil {
		return nil, true, err
	}
	raw, err = d.derive()
	return raw, true, err
}

// schema derives In's schema with the tool's options applied.
func (t *typed[In]) schema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	for _, o := range t.opts {
		o(s)
	}
	return s, nil
}

func (t *typed[In]) derive() (json.RawMessage, error) {
	s, err := t.schema()
	if err != nil {
		return nil, err
	}
	forModel(s)
	return json.Marshal(s)
}

// forModel drops from the schema sent to models the keywords that tell
// them nothing: the "null" of an optional parameter's ["null", type] (left
// out means the same) and a minimum of 0 (a count, an offset, a timeout).
// They cost tokens on every request of every agent. The schema that
// validates calls keeps them (resolve derives its own), so a null or a
// negative number is still answered with an error the model can fix.
func forModel(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		typ := s.Types[0]
		if typ == "null" {
			typ = s.Types[1]
		}
		s.Type, s.Types = typ, nil
	}
	if s.Minimum != nil && *s.Minimum == 0 {
		s.Minimum = nil
	}
	for _, p := range s.Properties {
		forModel(p)
	}
	forModel(s.Items)
}

func (t *typed[In]) resolve() (*jsonschema.Resolved, error) {
	t.once.Do(func() {
		// Without options the schema depends on In alone: the tools of
		// every session share its resolution (odin serve builds each
		// session's tools anew, and resolving was most of a tool's
		// first call). A Resolved is only read by Validate.
		key := reflect.TypeFor[In]()
		if len(t.opts) == 0 {
			if rs, ok := resolvedByType.Load(key); ok {
				t.resolved = rs.(*jsonschema.Resolved)
				return
			}
		}
		s, err := t.schema()
		if err == nil {
			t.resolved, err = s.Resolve(nil)
		}
		if err != nil {
			t.err = fmt.Errorf("tool: schema for %s: %w", t.info.Name, err)
			return
		}
		if len(t.opts) == 0 {
			resolvedByType.Store(key, t.resolved)
		}
	})
	return t.resolved, t.err
}

// resolvedByType holds the resolved schemas of tools built without
// options, by input type.
var resolvedByType sync.Map

func (t *typed[In]) Info() Info { return t.info }

// Input bounds, checked on the raw bytes before anything is decoded: a
// decoded argument is held several times over (the generic value the
// schema validates, the typed struct, the handler's copies), so an
// unbounded input could push one call past Odin's memory budget, and deep
// nesting costs stack and time in every decoder. The largest legitimate
// input is a WriteFile of a 10 MiB file, a little more once JSON-escaped.
const (
	MaxInputBytes = 16 << 20
	MaxInputDepth = 64
)

func (t *typed[In]) Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	if len(input) > MaxInputBytes {
		return Errorf("the arguments of %s are %d bytes, more than the %d MiB a tool call takes; split the work into smaller calls (e.g. write a big file in parts).",
			t.info.Name, len(input), MaxInputBytes>>20), nil
	}
	if d := jsonDepth(input); d > MaxInputDepth {
		return Errorf("the arguments of %s nest arrays and objects more than %d levels deep; send a flatter structure.", t.info.Name, MaxInputDepth), nil
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	var generic any
	// encoding/json: into an interface value it is the faster engine.
	if err := json.Unmarshal(input, &generic); err != nil {
		return Errorf("invalid JSON input for %s: %v. Send the arguments as one JSON object matching the tool's schema.", t.info.Name, err), nil
	}
	if _, ok := generic.(map[string]any); !ok {
		return Errorf("invalid input for %s: expected a JSON object, got %s", t.info.Name, jsonKind(generic)), nil
	}
	rs, err := t.resolve()
	if err != nil {
		return Result{}, err
	}
	if err := rs.Validate(generic); err != nil {
		return Errorf("invalid input for %s: %v", t.info.Name, err), nil
	}
	// Decoded in place: the input was checked whole above, and a copy of
	// a WriteFile's megabytes (string(input), a decoder's buffer) would
	// each cost its size again.
	var in In
	if err := decode(input, &in); err != nil {
		return Errorf("invalid input for %s: %v", t.info.Name, err), nil
	}
	return t.handler(ctx, env, in)
}

// decode is json.Unmarshal by the v2 engine with encoding/json's
// semantics (go-json-experiment/json/v1): into a tool's input struct it is
// about twice as fast with a third of the allocations (into an interface
// value it is slower, so the schema's generic value is left to
// encoding/json), and a fan-out's Orchestrator and specialists decode
// hundreds of inputs per turn. Input it rejects is decoded again by
// encoding/json, so that the error the model reads is worded as before.
func decode[T any](input []byte, v *T) error {
	if jsonv1.Unmarshal(input, v) == nil {
		return nil
	}
	var zero T
	*v = zero
	return json.Unmarshal(input, v)
}

// jsonDepth returns the deepest nesting of arrays and objects in raw,
// scanning bytes only (strings are skipped, escapes honoured); it stops
// counting once past MaxInputDepth.
func jsonDepth(raw []byte) int {
	depth, max := 0, 0
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				max = depth
				if max > MaxInputDepth {
					return max
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return max
}

func jsonKind(v any) string {
	if v == nil {
		return "null"
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	}
	return "a value"
}

// ErrUnknownTool is returned by Set.Run for a name the set does not hold.
var ErrUnknownTool = errors.New("unknown tool")
