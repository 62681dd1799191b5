package htmlproc

import (
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/odin-code/odin/internal/web"
)

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

func TestSniff(t *testing.T) {
	sniffs := []struct {
		body string
		kind web.PageKind
	}{
		{"<!DOCTYPE html><html><body>x</body></html>", web.KindHTML},
		{`{"a": 1}`, web.KindJSON},
		{"just words", web.KindText},
		{"%PDF-1.7\n...", web.KindBinary},
		{"\x89PNG\r\n\x1a\n\x00\x00", web.KindBinary},
	}
	for _, tt := range sniffs {
		if kind, _ := sniff([]byte(tt.body)); kind != tt.kind {
			t.Errorf("sniff(%.12q) = %s, want %s", tt.body, kind, tt.kind)
		}
	}
}
