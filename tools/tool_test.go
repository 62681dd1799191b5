package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/tools/tool"
)

// withinGuard is the test PathGuard: it resolves like the real guard and
// allows only paths inside root.
type withinGuard struct{ root string }

type guardDenial struct{ msg string }

func (d guardDenial) Error() string { return d.msg }
func (d guardDenial) Denied() bool  { return true }

func (g withinGuard) Resolve(_ context.Context, path string, _ tool.Access) (string, error) {
	p, err := workspace.Resolve(g.root, path)
	if err != nil {
		return "", err
	}
	if !workspace.Within(g.root, p) {
		return "", guardDenial{fmt.Sprintf("permission denied: %s is outside the project %s", p, g.root)}
	}
	return p, nil
}

// newRootEnv returns an Env rooted at a fresh temporary directory.
func newRootEnv(t *testing.T) *tool.Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &tool.Env{Root: root, Agent: "test", Reads: tool.NewReadState(), Guard: withinGuard{root: root}}
}

// writeTestFile creates root/rel with content and returns its path.
func writeTestFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runTool calls t with in marshalled to JSON and fails on a Go error.
func runTool(t testing.TB, tool tool.Tool, env *tool.Env, in any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Run(t.Context(), env, raw)
	if err != nil {
		t.Fatalf("%s returned a Go error: %v", tool.Info().Name, err)
	}
	return res
}

type echoInput struct {
	Name  string `json:"name"`
	Count int    `json:"count,omitempty"`
}

func newEcho() tool.Tool {
	return tool.New[echoInput]("Echo", tool.ClassRead, "  echoes its input  \n", func(_ context.Context, _ *tool.Env, in echoInput) (tool.Result, error) {
		return tool.Result{Output: fmt.Sprintf("%s x%d", in.Name, in.Count)}, nil
	})
}

func TestNewValidatesInput(t *testing.T) {
	tool := newEcho()
	tests := []struct {
		name    string
		input   string
		want    string // Output on success, or a substring of the error
		isError bool
	}{
		{"valid", `{"name":"a","count":2}`, "a x2", false},
		{"optional omitted", `{"name":"a"}`, "a x0", false},
		{"missing required field", `{"count":2}`, "name", true},
		{"wrong type", `{"name":3}`, "invalid input for Echo", true},
		{"extra property", `{"name":"a","color":"red"}`, "color", true},
		{"array instead of object", `["a"]`, "expected a JSON object, got an array", true},
		{"string instead of object", `"a"`, "got a string", true},
		{"null", `null`, "got null", true},
		{"invalid JSON", `{"name":`, "invalid JSON input for Echo", true},
		{"empty input counts as {}", ``, "name", true},
		{"fractional integer", `{"name":"a","count":1.5}`, "invalid input for Echo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tool.Run(t.Context(), nil, json.RawMessage(tt.input))
			if err != nil {
				t.Fatalf("Go error: %v", err)
			}
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v, want %v (output %q)", res.IsError, tt.isError, res.Output)
			}
			if tt.isError && !strings.Contains(res.Output, tt.want) {
				t.Errorf("output %q does not mention %q", res.Output, tt.want)
			}
			if !tt.isError && res.Output != tt.want {
				t.Errorf("output = %q, want %q", res.Output, tt.want)
			}
		})
	}
}

func TestNewInfo(t *testing.T) {
	info := newEcho().Info()
	if info.Name != "Echo" || info.Class != tool.ClassRead || info.Description != "echoes its input" {
		t.Errorf("info = %+v", info)
	}
	var schema map[string]any
	if err := json.Unmarshal(info.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string"},
			"count": map[string]any{"type": "integer"},
		},
		"required":             []any{"name"},
		"additionalProperties": false,
	}
	if d := cmp.Diff(want, schema); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
}

func TestSet(t *testing.T) {
	mk := func(name string, class tool.Class) tool.Tool {
		return tool.New[echoInput](name, class, name, func(context.Context, *tool.Env, echoInput) (tool.Result, error) {
			return tool.Result{Output: name}, nil
		})
	}
	s := NewSet(mk("A", tool.ClassRead), mk("B", tool.ClassWrite), mk("C", tool.ClassRead))

	if d := cmp.Diff([]string{"A", "B", "C"}, s.Names()); d != "" {
		t.Errorf("Names (-want +got):\n%s", d)
	}
	reads := s.Filter(func(i tool.Info) bool { return i.Class == tool.ClassRead })
	if d := cmp.Diff([]string{"A", "C"}, reads.Names()); d != "" {
		t.Errorf("Filter (-want +got):\n%s", d)
	}
	if s.Len() != 3 {
		t.Errorf("Filter changed the original set: %v", s.Names())
	}
	if _, ok := reads.Get("B"); ok {
		t.Error("filtered set still holds B")
	}

	var calls []string
	tag := func(label string) func(tool.Tool) tool.Tool {
		return func(tl tool.Tool) tool.Tool {
			return Wrap(tl, func(ctx context.Context, env *tool.Env, in json.RawMessage) (tool.Result, error) {
				calls = append(calls, label+":"+tl.Info().Name)
				return tl.Run(ctx, env, in)
			})
		}
	}
	mapped := s.Map(tag("inner"), tag("outer"))
	res, err := mapped.Run(t.Context(), nil, "B", json.RawMessage(`{"name":"x"}`))
	if err != nil || res.Output != "B" {
		t.Fatalf("Run B = %+v, %v", res, err)
	}
	// Decorators apply in order, so the last one is outermost.
	if d := cmp.Diff([]string{"outer:B", "inner:B"}, calls); d != "" {
		t.Errorf("decorator order (-want +got):\n%s", d)
	}
	if got := mapped.Defs()[1]; got.Name != "B" || got.Description != "B" || len(got.Parameters) == 0 {
		t.Errorf("Defs keep Info through decorators: %+v", got)
	}
	calls = nil
	if _, err := s.Run(t.Context(), nil, "B", json.RawMessage(`{"name":"x"}`)); err != nil || len(calls) != 0 {
		t.Errorf("Map changed the original set (calls %v, err %v)", calls, err)
	}

	res, err = s.Run(t.Context(), nil, "Nope", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Output, `unknown tool "Nope"`) || !strings.Contains(res.Output, "[A B C]") {
		t.Errorf("unknown tool result = %+v", res)
	}

	with := s.With(mk("D", tool.ClassExecute))
	if d := cmp.Diff([]string{"A", "B", "C", "D"}, with.Names()); d != "" || s.Len() != 3 {
		t.Errorf("With (-want +got):\n%s (original len %d)", d, s.Len())
	}
}

func TestNewSetPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewSet accepted two tools with the same name")
		}
	}()
	NewSet(newEcho(), newEcho())
}

func TestWithRecover(t *testing.T) {
	panicky := tool.New[echoInput]("Boom", tool.ClassRead, "", func(context.Context, *tool.Env, echoInput) (tool.Result, error) {
		var m map[string]int
		//lint:ignore SA5000 a real runtime panic (assignment to a nil map) is what this test needs
		m["x"] = 1
		return tool.Result{}, nil
	})
	var logged bytes.Buffer
	ctx := zerolog.New(&logged).WithContext(t.Context())
	res, err := WithRecover(panicky).Run(ctx, nil, json.RawMessage(`{"name":"a"}`))
	if err != nil {
		t.Fatalf("a panicking tool returned a Go error %v; want an error result", err)
	}
	if !res.IsError || !strings.Contains(res.Output, "Boom failed") || !strings.Contains(res.Output, "nil map") {
		t.Errorf("result = %+v", res)
	}
	if strings.Contains(res.Output, "goroutine") {
		t.Errorf("the stack reached the model: %q", res.Output)
	}
	// The log has the stack, naming the function that panicked.
	if log := logged.String(); !strings.Contains(log, `"tool":"Boom"`) || !strings.Contains(log, "TestWithRecover") {
		t.Errorf("log lacks the tool or the stack: %s", log)
	}
	// Recovering outside a permission check catches a panic in the check.
	checked := WithRecover(WithPermission(panicPermission{})(newEcho()))
	if res, err := checked.Run(t.Context(), nil, json.RawMessage(`{"name":"a"}`)); err != nil || !res.IsError || !strings.Contains(res.Output, "Echo failed") {
		t.Errorf("panic in the permission check: %+v, %v", res, err)
	}
	// A healthy tool passes through untouched.
	res, err = WithRecover(newEcho()).Run(t.Context(), nil, json.RawMessage(`{"name":"a","count":1}`))
	if err != nil || res.Output != "a x1" {
		t.Errorf("healthy tool: %+v, %v", res, err)
	}
	if WithRecover(newEcho()).Info().Name != "Echo" {
		t.Error("WithRecover lost Info")
	}
}

// panicPermission crashes the way a policy bug would.
type panicPermission struct{}

func (panicPermission) Authorize(context.Context, *tool.Env, tool.Info, json.RawMessage) error {
	var p *tool.Info
	_ = p.Name // nil dereference
	return nil
}
