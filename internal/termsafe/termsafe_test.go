package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// attacks is a table of what a model, a web page or a file can try to send
// to the user's terminal, and what must be left of it.
var attacks = []struct {
	name, in, want string
}{
	{"plain text unchanged", "hello, wörld ✓ 日本", "hello, wörld ✓ 日本"},
	{"newline and tab kept", "a\n\tb", "a\n\tb"},
	{"OSC 52 clipboard write, BEL", "x\x1b]52;c;cm0gLXJmIH4=\x07y", "xy"},
	{"OSC 52 clipboard write, ST", "x\x1b]52;c;cm0gLXJmIH4=\x1b\\y", "xy"},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\", "click me"},
	{"OSC 0 window title", "\x1b]0;pwned\x07ok", "ok"},
	{"CSI clear screen", "before\x1b[2Jafter", "beforeafter"},
	{"CSI cursor home and erase line", "\x1b[H\x1b[Kok", "ok"},
	{"CSI SGR from the model", "\x1b[31mred\x1b[0m", "red"},
	{"CSI private mode (alt screen)", "\x1b[?1049hok", "ok"},
	{"CSI with intermediates", "\x1b[0 qok", "ok"},
	{"8-bit CSI as UTF-8 rune", "a\u009b2Jb", "ab"},
	{"8-bit CSI as a raw byte", "a\x9b2Jb", "ab"},
	{"8-bit OSC as raw byte with 8-bit ST", "a\x9d52;c;Zm9v\x9cb", "ab"},
	{"8-bit OSC as rune with BEL", "a\u009d8;;http://x\u0007b", "ab"},
	{"DCS string", "a\x1bP1$r0m\x1b\\b", "ab"},
	{"8-bit DCS", "a\u0090q#0;2;0;0;0\u009cb", "ab"},
	{"APC string", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
	{"PM string", "a\x1b^private\x1b\\b", "ab"},
	{"SOS string", "a\x1bXstart\x1b\\b", "ab"},
	{"lone ST", "a\x1b\\b", "ab"},
	{"other C1 dropped", "a\u0085b\u008db", "abb"},
	{"ESC c full reset", "a\x1bcb", "ab"},
	{"ESC 7 save cursor, ESC M reverse index", "a\x1b7\x1bMb", "ab"},
	{"nF charset designation", "a\x1b(0b", "ab"},
	{"ESC # 8 screen alignment", "a\x1b#8b", "ab"},
	{"lone ESC at end", "ab\x1b", "ab"},
	{"ESC ESC", "a\x1b\x1b[2Jb", "ab"},
	{"BEL and backspace", "a\x07b\x08c", "abc"},
	{"NUL, VT, FF, DEL", "a\x00b\x0bc\x0cd\x7fe", "abcde"},
	{"bare CR cannot overwrite the line", "safe\rEVIL", "safe\nEVIL"},
	{"CR LF becomes LF", "a\r\nb", "a\nb"},
	{"CAN cancels a string", "a\x1b]52;c;x\x18b", "ab"},
	{"unterminated OSC keeps its text", "a\x1b]not a sequence", "anot a sequence"},
	{"OSC cut by a new escape", "a\x1b]52;c;xx\x1b[2Jb", "ab"},
	{"unfinished CSI", "a\x1b[12", "a"},
	{"CSI broken by a control", "a\x1b[1\nb", "a\nb"},
	{"bidi RLO made visible", "if a\u202e }{ b", "if a<U+202E> }{ b"},
	{"bidi isolates made visible", "\u2066x\u2069\u2067y\u2068", "<U+2066>x<U+2069><U+2067>y<U+2068>"},
	{"bidi embeddings made visible", "\u202a\u202b\u202c\u202d", "<U+202A><U+202B><U+202C><U+202D>"},
	{"invalid UTF-8 replaced", "a\xffb", "a\ufffdb"},
}

func TestTextAttacks(t *testing.T) {
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in)
			if got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			assertInert(t, got, true)
		})
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\nb\tc", "a b c"},
		{"evil\x1b]52;c;x\x07\r.go", "evil .go"},
		{"plain.go", "plain.go"},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
		assertInert(t, Line(tc.in), false)
	}
}

// TestChunksStayInert: sanitizing a stream chunk by chunk, however a
// sequence is split, never lets a control through.
func TestChunksStayInert(t *testing.T) {
	for _, tc := range attacks {
		for cut := 0; cut <= len(tc.in); cut++ {
			got := Text(tc.in[:cut]) + Text(tc.in[cut:])
			assertInert(t, got, true)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, tc := range attacks {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		assertInert(t, got, true)
		assertInert(t, Partial(s), false)
		if Text(got) != got {
			t.Errorf("Text is not idempotent on %q", s)
		}
	})
}

// assertInert fails when s holds anything a terminal would act on.
func assertInert(t *testing.T, s string, multiline bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			if !multiline {
				t.Errorf("%q keeps a line break or tab", s)
			}
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, isBidi(r):
			t.Errorf("%q keeps control %U", s, r)
		}
	}
}

func BenchmarkTextClean(b *testing.B) {
	s := strings.Repeat("An ordinary line of model output with `code` and ünïcode.\n", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = Text(s)
	}
}

func BenchmarkTextDirty(b *testing.B) {
	s := strings.Repeat("line \x1b[31mred\x1b[0m and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", 200)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = Text(s)
	}
}

func TestStyledKeepsOnlySGR(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[1;38;5;39modin\x1b[0m", "\x1b[1;38;5;39modin\x1b[0m"},
		{"\x1b[38:2:1:2:3mx\x1b[m", "\x1b[38:2:1:2:3mx\x1b[m"},
		{"\x1b[1mok\x1b[0m \x1b]52;c;Zm9v\x07\x1b[2J\x1b[?1049h", "\x1b[1mok\x1b[0m "},
		{"\x1b[1;2Hx", "x"},
		{"a\u009b31mb", "ab"}, // 8-bit CSI is never kept, even as SGR
	} {
		if got := Styled(tc.in); got != tc.want {
			t.Errorf("Styled(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range attacks {
		got := Styled(tc.in)
		if Text(got) != tc.want {
			t.Errorf("Styled(%q) = %q keeps more than SGR", tc.in, got)
		}
	}
}

func TestJSONEscapesWhatEncodingJSONLeavesRaw(t *testing.T) {
	in := map[string]string{"text": "a\x1b]52;c;x\x07 \u009b2J \u202e \x7f é ✓"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(b)
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\x7f"} {
		if strings.Contains(string(got), bad) {
			t.Errorf("%q left raw in %s", bad, got)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["text"] != in["text"] {
		t.Errorf("not lossless: %v %q", err, back["text"])
	}
	if clean := []byte(`{"a":"é ✓"}`); string(JSON(clean)) != string(clean) {
		t.Errorf("clean JSON changed")
	}
}

func TestPartialWithholdsUnfinishedSequences(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"text \x1b]52;c;cm0gLXJm", "text "},
		{"text \x1b]52;c;cm0g\x07 more", "text  more"},
		{"text \x1b[3", "text "},
		{"text \x1b[31m", "text "},
		{"text \x1b", "text "},
		{"text \x1b(", "text "},
		{"text \u009d8;;http://x", "text "},
		{"text \u009b2", "text "},
		{"a\x1b]x\x1b[2Jb \x1bPq", "ab "},
		{"plain", "plain"},
	} {
		if got := Partial(tc.in); got != tc.want {
			t.Errorf("Partial(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Every prefix of every attack is inert and never shows a payload the
	// whole text hides.
	for _, tc := range attacks {
		for cut := 0; cut <= len(tc.in); cut++ {
			got := Partial(tc.in[:cut])
			assertInert(t, got, false)
			if strings.Contains(got, "cm0gLXJm") || strings.Contains(got, "evil.example") {
				t.Errorf("Partial(%q) shows a payload: %q", tc.in[:cut], got)
			}
		}
	}
}
