package web

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
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

func TestDecode(t *testing.T) {
	latin := func(s string) []byte {
		b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name          string
		body          []byte
		headerDecoded bool
		want          string
	}{
		{"utf-8 undeclared", []byte("<p>naïve</p>"), false, "<p>naïve</p>"},
		{"utf-8 with BOM", []byte("\ufeff<p>BOM</p>"), false, "<p>BOM</p>"},
		{"windows-1252 undeclared", latin("<p>café €5</p>"), false, "<p>café €5</p>"},
		{"windows-1252 by meta", append([]byte(`<meta charset="windows-1252">`), latin("é")...), false, `<meta charset="windows-1252">é`},
		{"already decoded by header", []byte("<p>ok</p>\xff"), true, "<p>ok</p>\ufffd"},
		{"utf-16 by BOM", []byte{0xff, 0xfe, 'h', 0, 'i', 0}, false, "hi"},
	}
	for _, tt := range tests {
		if got := decode(tt.body, tt.headerDecoded); got != tt.want {
			t.Errorf("%s: decode = %q, want %q", tt.name, got, tt.want)
		}
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
		if kind, ok := classify(tt.mediaType); kind != tt.kind || ok != tt.ok {
			t.Errorf("classify(%q) = %s %v, want %s %v", tt.mediaType, kind, ok, tt.kind, tt.ok)
		}
	}
	sniffs := []struct {
		body string
		kind PageKind
	}{
		{"<!DOCTYPE html><html><body>x</body></html>", KindHTML},
		{`{"a": 1}`, KindJSON},
		{"just words", KindText},
		{"%PDF-1.7\n...", KindBinary},
		{"\x89PNG\r\n\x1a\n\x00\x00", KindBinary},
	}
	for _, tt := range sniffs {
		if kind, _ := sniff([]byte(tt.body)); kind != tt.kind {
			t.Errorf("sniff(%.12q) = %s, want %s", tt.body, kind, tt.kind)
		}
	}
}
