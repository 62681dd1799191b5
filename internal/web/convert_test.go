package web

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	para := strings.Repeat("word ", 40) + "\n\n"
	code := "```go\n" + strings.Repeat("fmt.Println(\"héllo\")\n", 200) + "```\n"
	tests := []struct {
		name  string
		text  string
		limit int
	}{
		{"paragraphs", strings.Repeat(para, 100), 2000},
		{"inside a code fence", "intro\n\n" + code + strings.Repeat(para, 10), 1500},
		{"one long line of multibyte runes", strings.Repeat("日本語テキスト", 1000), 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, cut := Cut(tt.text, tt.limit)
			if !cut {
				t.Fatal("not cut")
			}
			if len(out) > tt.limit {
				t.Errorf("len %d > limit %d", len(out), tt.limit)
			}
			if !utf8.ValidString(out) {
				t.Error("cut inside a rune")
			}
			if fences(out)%2 != 0 {
				t.Errorf("code fence left open:\n%s", out)
			}
			wantNote := fmt.Sprintf("of %d bytes.]", len(tt.text))
			if !strings.HasSuffix(out, wantNote) {
				t.Errorf("no note ending %q: ...%s", wantNote, out[max(0, len(out)-100):])
			}
			body := strings.TrimSuffix(out[:strings.LastIndex(out, "\n\n[Content cut")], "\n```")
			if !strings.HasPrefix(tt.text, body) {
				t.Error("kept text is not a prefix of the input")
			}
		})
	}
	if out, cut := Cut("short", 100); cut || out != "short" {
		t.Errorf("Cut(short) = %q, %v", out, cut)
	}
}

func TestClassifyAndSniff(t *testing.T) {
	tests := []struct {
		mediaType string
		kind      PageKind
		ok        bool
	}{
		{"text/html", KindHTML, true},
		{"application/xhtml+xml", KindHTML, true},
		{"text/markdown", KindMarkdown, true},
		{"application/json", KindJSON, true},
		{"application/vnd.api+json", KindJSON, true},
		{"application/atom+xml", KindText, true},
		{"text/csv", KindText, true},
		{"application/pdf", KindBinary, true},
		{"image/png", KindBinary, true},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", KindBinary, true},
		{"application/octet-stream", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if kind, ok := Classify(tt.mediaType); kind != tt.kind || ok != tt.ok {
			t.Errorf("Classify(%q) = %s %v, want %s %v", tt.mediaType, kind, ok, tt.kind, tt.ok)
		}
	}
}
