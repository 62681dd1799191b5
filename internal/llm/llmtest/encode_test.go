package llmtest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encode writes the same bytes as encoding/json (sorted keys, no HTML
// escaping) for everything a chunk is made of.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	f := 0.00017424
	values := []any{
		nil, "", "plain", `quote " and \ backslash`, "<html> & café\n\ttab \u2028 \x01", true, false,
		0, -7, int64(1 << 40), 1.5, f, []any{}, obj{},
		obj{"b": 1, "a": []any{"x", nil, obj{"z": false, "y": "é"}}, "c": obj{"usd": f}},
		[]string{"typed", "slice"}, map[string]int{"n": 1}, json.RawMessage(`{"k": [1, 2]}`),
		ErrorBody{Message: "m <b>", Type: "t", Code: "c"},
	}
	var ascii []byte
	for c := range 0x80 {
		ascii = append(ascii, byte(c))
	}
	values = append(values, string(ascii), `{"path": "a\\b.go", "n": "\u0007"}`, "bad \xff utf-8")
	for _, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if got := encode(v); string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("encode(%#v) = %s, want %s", v, got, want.Bytes())
		}
	}
}

// Every chunk of a turn with all quirks that change its shape encodes as
// encoding/json would.
func TestEncodeMatchesForQuirkyTurns(t *testing.T) {
	steps := []Step{
		{Text: "hello <world> \"quoted\"", Reasoning: "think", ToolCalls: []ToolCall{Call("Grep", map[string]any{"pattern": "a\\b"})}},
		{Text: "x", Quirks: Quirks{ContentParts: true, NullContent: true, UsageEveryChunk: true, UsageCostObject: true, Choices: 2}},
		{Reasoning: "r", Quirks: Quirks{ReasoningField: "thinking_parts", EmptyChoicesFirst: true}},
	}
	for _, st := range steps {
		tr := newTurn(st, "m", "p", 0, 1, 10, true)
		for _, ev := range tr.events() {
			if ev.chunk == nil {
				continue
			}
			data := ev.payload()
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("chunk %s: %v", data, err)
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(v)
			if string(data) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
				t.Errorf("chunk %s\nwant  %s", data, want.Bytes())
			}
		}
	}
}
