package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// Arguments past the limit are counted, not kept: the call comes back with
// "{}" and Dropped set, while a later call of the same response is whole.
func TestOversizedToolArgumentsAreDropped(t *testing.T) {
	acc := newAccumulator(nil, 100)
	chunk := func(index int, id, name, args string) {
		t.Helper()
		tc := map[string]any{"index": index, "function": map[string]any{"name": name, "arguments": args}}
		if id != "" {
			tc["id"] = id
		}
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{tc}}}}})
		if err := acc.chunk(b); err != nil {
			t.Fatal(err)
		}
	}
	chunk(0, "c1", "WriteFile", `{"content":"`)
	for range 10 {
		chunk(0, "", "", strings.Repeat("x", 30))
	}
	chunk(0, "", "", `"}`)
	chunk(1, "c2", "ReadFile", `{"file_path":"/a"}`)
	if err := acc.chunk([]byte(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)); err != nil {
		t.Fatal(err)
	}
	if n := acc.calls[0].args.Cap(); n > 200 {
		t.Errorf("the dropped call still holds a %d-byte buffer", n)
	}
	r, err := acc.response(&Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 2 {
		t.Fatalf("calls = %+v", r.ToolCalls)
	}
	if c := r.ToolCalls[0]; c.Dropped != int64(len(`{"content":"`)+300+2) || c.Arguments != "{}" || c.Name != "WriteFile" {
		t.Errorf("oversized call = %+v", c)
	}
	if c := r.ToolCalls[1]; c.Dropped != 0 || c.Arguments != `{"file_path":"/a"}` {
		t.Errorf("second call = %+v", c)
	}
}
