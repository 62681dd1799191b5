package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/odin-code/odin/internal/llm"
)

var everyPart = []Part{
	TextPart{Text: "hello \"world\"\n\ttabs, ünïcødé, \x00"},
	ReasoningPart{Text: "thinking"},
	ToolCallPart{ID: "call_1", Name: "ReadFile", Input: `{"path":"a.go"}`, Finished: true},
	ToolCallPart{ID: "call_g", Name: "LS", Input: `{}`, Finished: true, Extra: `{"extra_content":{"google":{"thought_signature":"c2ln"}}}`},
	ToolCallPart{ID: "call_2", Name: "Grep", Input: `{"pat`},
	ToolResultPart{ToolCallID: "call_1", Name: "ReadFile", Content: "package a", IsError: true, Cancelled: true},
	ToolResultPart{},
	FinishPart{Reason: llm.FinishStop, Time: time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)},
	FinishPart{Reason: "canceled"},
	FinishPart{Time: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}, // before 1970: zigzag
	TextPart{},
	TextPart{Text: "<repo_map>…</repo_map>", Injected: true},
	ImagePart{Name: "shot.png", MIME: "image/png", Data: []byte("\x89PNG\r\n\x1a\n\x00binary"), Width: 640, Height: 480},
	ImagePart{},
}

func TestCodecRoundTrip(t *testing.T) {
	tests := [][]Part{nil, {}, everyPart, {TextPart{Text: strings.Repeat("x", 1<<20)}}}
	for _, parts := range tests {
		enc, err := encodeParts(parts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeParts(enc)
		if err != nil {
			t.Fatal(err)
		}
		want := parts
		if want == nil {
			want = []Part{}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestCodecSkipsUnknownFields(t *testing.T) {
	// A later Odin adds a field to a part and a field to the list.
	part := protowire.AppendTag(nil, fieldKind, protowire.VarintType)
	part = protowire.AppendVarint(part, kindText)
	part = protowire.AppendTag(part, 99, protowire.BytesType)
	part = protowire.AppendString(part, "future")
	part = protowire.AppendTag(part, fieldText, protowire.BytesType)
	part = protowire.AppendString(part, "kept")
	var b []byte
	b = protowire.AppendTag(b, 7, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, fieldPart, protowire.BytesType)
	b = protowire.AppendBytes(b, part)
	got, err := decodeParts(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Part{TextPart{Text: "kept"}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCodecRejectsCorruptData(t *testing.T) {
	good, err := encodeParts(everyPart)
	if err != nil {
		t.Fatal(err)
	}
	unknownKind := protowire.AppendTag(nil, fieldPart, protowire.BytesType)
	unknownKind = protowire.AppendBytes(unknownKind, protowire.AppendVarint(protowire.AppendTag(nil, fieldKind, protowire.VarintType), 42))
	tests := map[string][]byte{
		"truncated":    good[:len(good)-3],
		"bad tag":      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"unknown kind": unknownKind,
		"no kind":      protowire.AppendBytes(protowire.AppendTag(nil, fieldPart, protowire.BytesType), nil),
		"text as json": []byte(`[{"type":"text","text":"hi"}]`),
	}
	for name, data := range tests {
		if _, err := decodeParts(data); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: error %v, want errCorrupt", name, err)
		}
	}
	for _, bad := range [][]Part{{nil}, {badPart{}}} {
		if _, err := encodeParts(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("encodeParts(%v) = %v, want ErrInvalid", bad, err)
		}
	}
}

type badPart struct{}

func (badPart) partType() string { return "bad" }

func TestMessageJSONRoundTrip(t *testing.T) {
	m := Message{ID: "m1", SessionID: "s1", Seq: 3, Role: llm.RoleAssistant, Model: "gpt-x",
		CreatedAt: time.Date(2025, 3, 1, 0, 0, 0, 5, time.UTC), UpdatedAt: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), Parts: everyPart}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `{"type":"tool_call","id":"call_1","name":"ReadFile","input":"{\"path\":\"a.go\"}","finished":true}`) {
		t.Errorf("unexpected JSON form of a tool call: %s", data)
	}
	var back Message
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"id":"x","parts":[{"type":"hologram"}]}`), &back); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown part type: %v, want ErrInvalid", err)
	}
}

func TestCapOutput(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
	}{
		{"short", "abc", 100},
		{"exact", strings.Repeat("a", 100), 100},
		{"long ascii", strings.Repeat("a", 1000), 100},
		{"long multibyte", strings.Repeat("é", 1000), 101},
		{"emoji", strings.Repeat("🙂", 500), 77},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CapOutput(tc.in, tc.max)
			if len(tc.in) <= tc.max {
				if got != tc.in {
					t.Errorf("short input changed: %q", got)
				}
				return
			}
			if len(got) > tc.max {
				t.Errorf("len %d > max %d", len(got), tc.max)
			}
			if !utf8.ValidString(got) {
				t.Errorf("cut inside a character: %q", got)
			}
			if !strings.Contains(got, "truncated]") {
				t.Errorf("no truncation note: %q", got)
			}
			if again := CapOutput(got, tc.max); again != got {
				t.Errorf("capping twice changed it: %q", again)
			}
		})
	}
}

func TestLLMMessages(t *testing.T) {
	msgs := []Message{
		{Role: llm.RoleUser, Parts: []Part{TextPart{Text: "summary "}, ImagePart{Name: "a.png", MIME: "image/png", Data: []byte{1}}, TextPart{Text: "and more"}}},
		{Role: llm.RoleAssistant, Parts: []Part{
			ReasoningPart{Text: "hmm"}, TextPart{Text: "reading"},
			ToolCallPart{ID: "a", Name: "ReadFile", Input: `{"path":"x"}`, Finished: true},
			ToolCallPart{ID: "b", Name: "LS", Input: `{}`, Finished: true, Extra: `{"extra_content":{"google":{"thought_signature":"c2ln"}}}`},
			FinishPart{Reason: llm.FinishToolCalls},
		}},
		{Role: llm.RoleTool, Parts: []Part{
			ToolResultPart{ToolCallID: "a", Name: "ReadFile", Content: "data"},
			ImagePart{Name: "ReadFile", MIME: "image/gif", Data: []byte{2}, Width: 1, Height: 1},
			ToolResultPart{ToolCallID: "b", Name: "LS", Content: CancelledContent, IsError: true, Cancelled: true},
		}},
		{Role: llm.RoleAssistant, Parts: []Part{ReasoningPart{Text: "cut off before any output"}}},
		{Role: llm.RoleAssistant, Parts: []Part{TextPart{Text: "done"}, FinishPart{Reason: llm.FinishStop}}},
	}
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "summary and more", Images: []llm.Image{{Name: "a.png", MIME: "image/png", Data: []byte{1}}}},
		{Role: llm.RoleAssistant, Content: "reading", Reasoning: "hmm", ToolCalls: []llm.ToolCall{
			{ID: "a", Name: "ReadFile", Arguments: `{"path":"x"}`},
			{ID: "b", Name: "LS", Arguments: `{}`, Extra: json.RawMessage(`{"extra_content":{"google":{"thought_signature":"c2ln"}}}`)},
		}},
		{Role: llm.RoleTool, Content: "data", ToolCallID: "a", Name: "ReadFile", Images: []llm.Image{{Name: "ReadFile", MIME: "image/gif", Data: []byte{2}, Width: 1, Height: 1}}},
		{Role: llm.RoleTool, Content: CancelledContent, ToolCallID: "b", Name: "LS"},
		{Role: llm.RoleAssistant, Content: "done"},
	}
	if diff := cmp.Diff(want, LLMMessages(msgs)); diff != "" {
		t.Errorf("LLMMessages (-want +got):\n%s", diff)
	}
}

// Injected context goes to the model but not into Text, the transcript's
// view of a message.
func TestInjectedTextApart(t *testing.T) {
	m := Message{Role: llm.RoleUser, Parts: []Part{
		TextPart{Text: "[reports]\n\n", Injected: true}, TextPart{Text: "fix it"}, TextPart{Text: "\n\n<repo_map>x</repo_map>", Injected: true}}}
	if got := m.Text(); got != "fix it" {
		t.Errorf("Text() = %q; want only the typed text", got)
	}
	lm := LLMMessages([]Message{m})
	if len(lm) != 1 || lm[0].Content != "[reports]\n\nfix it\n\n<repo_map>x</repo_map>" || lm[0].Typed != "fix it" {
		t.Errorf("LLMMessages = %+v; want all of it for the model and the typed text kept", lm)
	}
}
