package llmtest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

func TestLoadScriptYAML(t *testing.T) {
	s, err := llmtest.LoadScript(filepath.Join("testdata", "script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "demo-model" {
		t.Errorf("model = %q", s.Model)
	}
	if got := len(s.Agents["orchestrator"]); got != 2 {
		t.Fatalf("orchestrator steps = %d, want 2", got)
	}
	o := s.Agents["orchestrator"]
	if o[0].Reasoning != "List first." || o[0].ToolCalls[0].Name != "LS" || o[0].ToolCalls[0].Arguments.String() != `{"path":"{{root}}"}` {
		t.Errorf("orchestrator[0] = %+v, args %s", o[0], o[0].ToolCalls[0].Arguments)
	}
	if o[1].When != "main.go" || o[1].Usage == nil || *o[1].Usage != (llm.Usage{PromptTokens: 10, CompletionTokens: 5}) {
		t.Errorf("orchestrator[1] = %+v", o[1])
	}
	c := s.Agents["code"]
	if c[0].Status != 429 || c[0].RetryAfter != "2" {
		t.Errorf("code[0] = %+v", c[0])
	}
	if got := c[1].ToolCalls[0].Arguments.String(); got != `{"path": "{{root}}/x", broken` {
		t.Errorf("string arguments must be kept verbatim, got %q", got)
	}
	if q := c[1].Quirks; !q.ToolCallWhole || q.IndexBase != 1 {
		t.Errorf("quirks = %+v", q)
	}
	if d := time.Duration(c[1].ChunkDelay); d != time.Millisecond {
		t.Errorf("chunk_delay = %v", d)
	}
	if d := s.Agents[llmtest.DefaultAgent]; len(d) != 1 || d[0].Text != "default answer" {
		t.Errorf("top-level steps must become the default agent's, got %+v", d)
	}
}

func TestParseScriptJSON(t *testing.T) {
	s, err := llmtest.ParseScript([]byte(`{"agents":{"qa":[{"text":"ok","quirks":{"no_index":true},"latency":"5ms"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Agents["qa"][0]
	if st.Text != "ok" || !st.Quirks.NoIndex || time.Duration(st.Latency) != 5*time.Millisecond {
		t.Errorf("step = %+v", st)
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", ``, "empty script"},
		{"unknown key", "steps:\n  - txt: hi\n", `unknown field "txt"`},
		{"unknown quirk", "steps:\n  - quirks: [no_such_quirk]\n", "no_such_quirk"},
		{"bad reasoning field", "steps:\n  - quirks: {reasoning_field: thoughts}\n", "reasoning_field"},
		{"number for a duration", "steps:\n  - latency: 200\n", `such as "250ms"`},
		{"bad duration", "steps:\n  - latency: soon\n", "soon"},
		{"status not an error", "steps:\n  - status: 200\n", "status 200"},
		{"tool call without name", "steps:\n  - tool_calls: [{arguments: {}}]\n", "no name"},
		{"not yaml", "steps: [\n", "parse script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmtest.ParseScript([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestLoadScriptNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(p, []byte("agents: {x: [{bogus: 1}]}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := llmtest.LoadScript(p)
	if err == nil || !strings.Contains(err.Error(), "broken.yaml") {
		t.Fatalf("err = %v, want it to name the file", err)
	}
	if _, err := llmtest.LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file: want an error")
	}
}

func TestWithVars(t *testing.T) {
	s := llmtest.NewScript().Add("{{agent}}", llmtest.Step{
		When: "in {{root}}",
		Text: "root is {{ root }}; template {{.Keep}} stays",
		ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ReadFile", map[string]any{"path": "{{root}}/a.go", "n": 1}),
			llmtest.Call("Raw", `{"p": "{{root}}"`),
		},
	})
	root := `/tmp/has "quotes" \ and spaces`
	got, err := s.WithVars(map[string]string{"root": root, "agent": "code"})
	if err != nil {
		t.Fatal(err)
	}
	st := got.Agents["code"][0]
	if st.When != "in "+root || st.Text != "root is "+root+"; template {{.Keep}} stays" {
		t.Errorf("when %q text %q", st.When, st.Text)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(st.ToolCalls[0].Arguments.String()), &args); err != nil {
		t.Fatalf("substituted object arguments are not JSON: %v (%s)", err, st.ToolCalls[0].Arguments)
	}
	if diff := cmp.Diff(map[string]any{"path": root + "/a.go", "n": float64(1)}, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if got := st.ToolCalls[1].Arguments.String(); got != `{"p": "`+root+`"` {
		t.Errorf("raw arguments = %q", got)
	}
	if s.Agents["{{agent}}"][0].Text != "root is {{ root }}; template {{.Keep}} stays" {
		t.Error("WithVars changed the original script")
	}

	if _, err := s.WithVars(map[string]string{"root": "/x"}); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("undefined variable: err = %v, want it named", err)
	}
}

func TestParseVars(t *testing.T) {
	got, err := llmtest.ParseVars([]string{"root=/tmp/x", "empty=", "eq=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"root": "/tmp/x", "empty": "", "eq": "a=b"}, got); diff != "" {
		t.Errorf("vars (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"noequals", "=v", "a-b=1", "1x=2"} {
		if _, err := llmtest.ParseVars([]string{bad}); err == nil {
			t.Errorf("ParseVars(%q): want an error", bad)
		}
	}
}
