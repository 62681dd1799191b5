package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

type chunk = map[string]any

// stream posts one streaming request and returns the raw body, its decoded
// data payloads and the error that ended reading, if any.
func stream(t *testing.T, st llmtest.Step) (string, []chunk, error) {
	t.Helper()
	srv := llmtest.NewServer(t, llmtest.NewScript().Add(llmtest.DefaultAgent, st))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	raw, readErr := io.ReadAll(resp.Body)
	var chunks []chunk
	for _, block := range strings.Split(string(raw), "\n\n") {
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("data is not JSON: %q: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	return string(raw), chunks, readErr
}

func choicesOf(c chunk) []chunk {
	l, _ := c["choices"].([]any)
	out := make([]chunk, len(l))
	for i, x := range l {
		out[i] = x.(chunk)
	}
	return out
}

func deltas(cs []chunk) []chunk {
	var out []chunk
	for _, c := range cs {
		for _, ch := range choicesOf(c) {
			if ch["index"] == float64(0) {
				out = append(out, ch["delta"].(chunk))
			}
		}
	}
	return out
}

func toolDeltas(cs []chunk) []chunk {
	var out []chunk
	for _, d := range deltas(cs) {
		l, _ := d["tool_calls"].([]any)
		for _, x := range l {
			out = append(out, x.(chunk))
		}
	}
	return out
}

func count(cs []chunk, pred func(chunk) bool) int {
	n := 0
	for _, c := range cs {
		if pred(c) {
			n++
		}
	}
	return n
}

func hasUsage(c chunk) bool { _, ok := c["usage"]; return ok }

func finishes(cs []chunk) []any {
	var out []any
	for _, c := range cs {
		for _, ch := range choicesOf(c) {
			if f, ok := ch["finish_reason"]; ok && f != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// TestWireQuirks checks that each quirk really changes the wire, since the
// adapter tests would pass just as well against a server ignoring them.
func TestWireQuirks(t *testing.T) {
	call := llmtest.Call("ReadFile", map[string]string{"path": "internal/a.go"})
	base := llmtest.Step{Reasoning: "think", Text: "Hello, world", ToolCalls: []llmtest.ToolCall{call}}
	with := func(q llmtest.Quirks) llmtest.Step { s := base; s.Quirks = q; return s }
	tests := []struct {
		name  string
		step  llmtest.Step
		check func(raw string, cs []chunk) string // "" when fine
	}{
		{"default shape", base, func(raw string, cs []chunk) string {
			td := toolDeltas(cs)
			if len(td) < 3 || td[0]["id"] != "call_default_0_0" || td[0]["index"] != float64(0) || td[1]["id"] != nil {
				return "want a first delta with id and index 0, then id-less continuations"
			}
			if f := finishes(cs); len(f) != 1 || f[0] != "tool_calls" {
				return "want one tool_calls finish"
			}
			if !strings.HasSuffix(raw, "data: [DONE]\n\n") || !hasUsage(cs[len(cs)-1]) || len(choicesOf(cs[len(cs)-1])) != 0 {
				return "want a trailing choices: [] usage chunk and [DONE]"
			}
			return ""
		}},
		{"tool_call_whole", with(llmtest.Quirks{ToolCallWhole: true}), func(_ string, cs []chunk) string {
			td := toolDeltas(cs)
			if len(td) != 1 || td[0]["function"].(chunk)["arguments"] != `{"path":"internal/a.go"}` {
				return "want the whole call in one delta"
			}
			return ""
		}},
		{"no_index", with(llmtest.Quirks{NoIndex: true}), func(_ string, cs []chunk) string {
			if count(toolDeltas(cs), func(c chunk) bool { _, ok := c["index"]; return ok }) != 0 {
				return "want no index on tool deltas"
			}
			return ""
		}},
		{"index_base", with(llmtest.Quirks{IndexBase: 1}), func(_ string, cs []chunk) string {
			if count(toolDeltas(cs), func(c chunk) bool { return c["index"] != float64(1) }) != 0 {
				return "want index 1 on every tool delta"
			}
			return ""
		}},
		{"repeat_id", with(llmtest.Quirks{RepeatID: true}), func(_ string, cs []chunk) string {
			if count(toolDeltas(cs), func(c chunk) bool { return c["id"] != "call_default_0_0" }) != 0 {
				return "want the id on every tool delta"
			}
			return ""
		}},
		{"empty_id", with(llmtest.Quirks{EmptyID: true}), func(_ string, cs []chunk) string {
			td := toolDeltas(cs)
			if count(td[1:], func(c chunk) bool { return c["id"] != "" }) != 0 {
				return `want "id": "" on continuations`
			}
			return ""
		}},
		{"empty_name", with(llmtest.Quirks{EmptyName: true}), func(_ string, cs []chunk) string {
			td := toolDeltas(cs)
			if count(td[1:], func(c chunk) bool { return c["function"].(chunk)["name"] != "" }) != 0 {
				return `want "name": "" on continuations`
			}
			return ""
		}},
		{"name_without_arguments", with(llmtest.Quirks{NameWithoutArguments: true}), func(_ string, cs []chunk) string {
			if _, ok := toolDeltas(cs)[0]["function"].(chunk)["arguments"]; ok {
				return "want no arguments key on the first delta"
			}
			return ""
		}},
		{"stop_with_tools", with(llmtest.Quirks{StopWithTools: true}), func(_ string, cs []chunk) string {
			if f := finishes(cs); len(f) != 1 || f[0] != "stop" {
				return "want finish stop"
			}
			return ""
		}},
		{"finish_twice", with(llmtest.Quirks{FinishTwice: true}), func(_ string, cs []chunk) string {
			if len(finishes(cs)) != 2 {
				return "want two finish chunks"
			}
			return ""
		}},
		{"no_finish_key", with(llmtest.Quirks{NoFinishKey: true}), func(_ string, cs []chunk) string {
			for _, c := range cs {
				for _, ch := range choicesOf(c) {
					if f, ok := ch["finish_reason"]; ok && f == nil {
						return "want no finish_reason: null anywhere"
					}
				}
			}
			return ""
		}},
		{"usage_twice", with(llmtest.Quirks{UsageTwice: true}), func(_ string, cs []chunk) string {
			if count(cs, hasUsage) != 2 {
				return "want usage twice"
			}
			return ""
		}},
		{"usage_on_finish", with(llmtest.Quirks{UsageOnFinish: true}), func(_ string, cs []chunk) string {
			last := cs[len(cs)-1]
			if count(cs, hasUsage) != 1 || !hasUsage(last) || len(choicesOf(last)) != 1 {
				return "want usage only on the finish chunk"
			}
			return ""
		}},
		{"usage_every_chunk", with(llmtest.Quirks{UsageEveryChunk: true}), func(_ string, cs []chunk) string {
			if count(cs, hasUsage) != len(cs) {
				return "want usage on every chunk"
			}
			return ""
		}},
		{"no_usage", with(llmtest.Quirks{NoUsage: true}), func(_ string, cs []chunk) string {
			if count(cs, hasUsage) != 0 {
				return "want no usage"
			}
			return ""
		}},
		{"usage_cost_object", with(llmtest.Quirks{UsageCostObject: true}), func(_ string, cs []chunk) string {
			if _, ok := cs[len(cs)-1]["usage"].(chunk)["cost"].(chunk); !ok {
				return "want usage.cost as an object"
			}
			return ""
		}},
		{"empty_choices_first", with(llmtest.Quirks{EmptyChoicesFirst: true}), func(_ string, cs []chunk) string {
			if _, ok := cs[0]["prompt_filter_results"]; !ok || len(choicesOf(cs[0])) != 0 {
				return "want a first chunk with choices: [] and prompt_filter_results"
			}
			return ""
		}},
		{"comments", with(llmtest.Quirks{Comments: true}), func(raw string, _ []chunk) string {
			if !strings.HasPrefix(raw, ": OPENROUTER PROCESSING\n\n") {
				return "want keep-alive comments first"
			}
			return ""
		}},
		{"reasoning_field reasoning", with(llmtest.Quirks{ReasoningField: "reasoning"}), func(_ string, cs []chunk) string {
			if count(deltas(cs), func(d chunk) bool { return d["reasoning"] == "thin" }) != 1 {
				return "want delta.reasoning"
			}
			return ""
		}},
		{"thinking_parts and content_parts", with(llmtest.Quirks{ReasoningField: "thinking_parts", ContentParts: true}), func(_ string, cs []chunk) string {
			kinds := map[string]int{}
			for _, d := range deltas(cs) {
				if l, ok := d["content"].([]any); ok {
					kinds[l[0].(chunk)["type"].(string)]++
				}
			}
			if kinds["thinking"] == 0 || kinds["text"] == 0 {
				return "want thinking and text parts"
			}
			return ""
		}},
		{"null_content", with(llmtest.Quirks{NullContent: true}), func(_ string, cs []chunk) string {
			if count(deltas(cs), func(d chunk) bool { v, ok := d["content"]; return ok && v == nil }) == 0 {
				return "want content: null"
			}
			return ""
		}},
		{"choices", with(llmtest.Quirks{Choices: 3}), func(_ string, cs []chunk) string {
			seen := map[any]bool{}
			for _, c := range cs {
				for _, ch := range choicesOf(c) {
					seen[ch["index"]] = true
				}
			}
			if len(seen) != 3 {
				return "want choices 0, 1 and 2"
			}
			return ""
		}},
		{"chunk_size", llmtest.Step{Text: "abcdef", ChunkSize: 2}, func(_ string, cs []chunk) string {
			if count(deltas(cs), func(d chunk) bool { s, _ := d["content"].(string); return len(s) == 2 }) != 3 {
				return "want three 2-rune text deltas"
			}
			return ""
		}},
		{"no_done", llmtest.Step{Text: "x", NoDone: true}, func(raw string, cs []chunk) string {
			if strings.Contains(raw, "[DONE]") || len(finishes(cs)) != 1 {
				return "want a finish but no [DONE]"
			}
			return ""
		}},
		{"error_midstream", llmtest.Step{Text: "abcdefgh", ErrorMidstream: true, CutAfter: 2}, func(raw string, cs []chunk) string {
			last := cs[len(cs)-1]
			if len(cs) != 3 || last["error"] == nil || len(finishes(cs)) != 0 || strings.Contains(raw, "[DONE]") {
				return "want two chunks, then an error object, no finish, no [DONE]"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, cs, err := stream(t, tt.step)
			if err != nil {
				t.Fatalf("reading stream: %v", err)
			}
			if msg := tt.check(raw, cs); msg != "" {
				t.Errorf("%s; stream was:\n%s", msg, raw)
			}
		})
	}
}

func TestCutAfterDropsTheConnection(t *testing.T) {
	raw, cs, err := stream(t, llmtest.Step{Text: "abcdefghijkl", CutAfter: 2})
	if err == nil {
		t.Errorf("want a read error from the dropped connection, stream was:\n%s", raw)
	}
	if len(cs) != 2 || len(finishes(cs)) != 0 || strings.Contains(raw, "[DONE]") {
		t.Errorf("want exactly two chunks, no finish, no [DONE]; got:\n%s", raw)
	}
}

func TestFaultStatus(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add(llmtest.DefaultAgent,
		llmtest.Step{Status: 429, RetryAfter: "3", Headers: map[string]string{"retry-after-ms": "3000"}},
		llmtest.Step{Status: 502, Body: "<html>bad gateway</html>"},
	))
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error llmtest.ErrorBody }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || resp.Header.Get("Retry-After-Ms") != "3000" || body.Error.Code != "rate_limit_exceeded" {
		t.Errorf("429: status %d headers %v body %+v", resp.StatusCode, resp.Header, body)
	}
	resp, err = http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 502 || string(b) != "<html>bad gateway</html>" {
		t.Errorf("502: status %d body %q", resp.StatusCode, b)
	}
}
