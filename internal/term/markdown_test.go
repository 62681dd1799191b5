package term

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

func TestParseInline(t *testing.T) {
	tests := []struct {
		in   string
		want []span
	}{
		{"plain text", []span{{"plain text", 0}}},
		{"a **bold** b", []span{{"a ", 0}, {"bold", fBold}, {" b", 0}}},
		{"__bold__", []span{{"bold", fBold}}},
		{"an *em* and _em_", []span{{"an ", 0}, {"em", fItalic}, {" and ", 0}, {"em", fItalic}}},
		{"snake_case_name stays", []span{{"snake_case_name stays", 0}}},
		{"use `a*b*c` here", []span{{"use ", 0}, {"a*b*c", fCode}, {" here", 0}}},
		{"``code with ` tick``", []span{{"code with ` tick", fCode}}},
		{"**bold `code` inside**", []span{{"bold ", fBold}, {"code", fBold | fCode}, {" inside", fBold}}},
		{"**`x`** then **`a` b**", []span{{"x", fBold | fCode}, {" then ", 0}, {"a", fBold | fCode}, {" b", fBold}}},
		{"*`x`*", []span{{"x", fItalic | fCode}}},
		{"~~gone~~ kept", []span{{"gone", fStrike}, {" kept", 0}}},
		{"see [docs](https://x.dev/a) now", []span{{"see ", 0}, {"docs", fLink}, {" (https://x.dev/a)", fDim}, {" now", 0}}},
		{"[https://x.dev](https://x.dev)", []span{{"https://x.dev", fLink}}},
		{"unclosed **bold and * star", []span{{"unclosed **bold and * star", 0}}},
		{`escaped \*not em\*`, []span{{"escaped *not em*", 0}}},
		{"2 * 3 * 4", []span{{"2 * 3 * 4", 0}}},
		{"***both***", []span{{"both", fBold | fItalic}}},
		{"é **ü** ñ", []span{{"é ", 0}, {"ü", fBold}, {" ñ", 0}}},
		{"[not a link] (x)", []span{{"[not a link] (x)", 0}}},
	}
	for _, tt := range tests {
		got := mergeSpans(parseInline(tt.in, 0, nil))
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(span{})); diff != "" {
			t.Errorf("parseInline(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// mergeSpans joins neighbours with the same flags, so tests do not depend
// on how the parser happened to split plain text.
func mergeSpans(in []span) []span {
	var out []span
	for _, s := range in {
		if n := len(out); n > 0 && out[n-1].f == s.f {
			out[n-1].text += s.text
			continue
		}
		out = append(out, s)
	}
	return out
}

func TestMarkdownStreamsByLine(t *testing.T) {
	th := NewTheme(io.Discard, ColorFull)
	md := NewMarkdown(th, 0)
	var got []string
	// The answer arrives in pieces that split words, markers and lines.
	for _, piece := range []string{"# Ti", "tle\nSome **bo", "ld** text", "\n```go\nfunc main() {", "}\n", "```\n- it", "em one\n1. first\nend"} {
		got = append(got, md.Write(piece)...)
		if strings.Contains(md.Partial(), "\n") {
			t.Fatalf("partial %q holds a newline", md.Partial())
		}
	}
	if md.Partial() != "end" {
		t.Errorf("partial = %q, want %q", md.Partial(), "end")
	}
	got = append(got, md.Flush()...)
	plain := make([]string, len(got))
	for i, l := range got {
		plain[i] = ansi.Strip(l)
	}
	want := []string{"Title", "Some bold text", "go", "  func main() {}", "• item one", "1. first", "end"}
	if diff := cmp.Diff(want, plain); diff != "" {
		t.Errorf("rendered lines (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[1], "\x1b[1m") {
		t.Errorf("bold was not styled: %q", got[1])
	}
	if md.InCode() {
		t.Errorf("fence still open after Flush")
	}
}

func TestMarkdownBlocks(t *testing.T) {
	th := NewTheme(io.Discard, ColorFull)
	tests := []struct {
		name  string
		width int
		in    string
		want  []string
	}{
		{"heading levels", 0, "## Two ##\n###### Six\n", []string{"Two", "Six"}},
		{"rule", 0, "---\n", []string{strings.Repeat("─", 40)}},
		{"rule in a narrow terminal", 12, "* * *\n", []string{strings.Repeat("─", 12)}},
		{"quote", 0, "> quoted *text*\n", []string{"│ quoted text"}},
		{"task list", 0, "- [ ] todo\n- [x] done\n", []string{"☐ todo", "☑ done"}},
		{"nested list keeps indent", 0, "  * inner\n", []string{"  • inner"}},
		{"code is not styled inline, fences are not shown", 0, "```\n**x** `y`\n```\n", []string{"  **x** `y`"}},
		{"tilde fence closes only on tildes", 0, "~~~\n```\n~~~\n", []string{"  ```"}},
		{"a fence's language is a label", 0, "```python\nx = 1\n```\nafter\n", []string{"python", "  x = 1", "after"}},
		{"table columns aligned", 0, "| name | n |\n|---|--:|\n| **alpha** | 1 |\n| b | 22 |\nafter\n",
			[]string{"name  │ n", "──────┼───", "alpha │ 1", "b     │ 22", "after"}},
		{"a table row alone", 0, "| a | **b** |\n", []string{"a │ b"}},
		{"escaped pipe stays in its cell", 0, "| a \\| b | c |\n", []string{"a | b │ c"}},
		{"table wider than the terminal is printed as written", 12, "| alpha | beta |\n|---|---|\n| x | y |\n",
			[]string{"| alpha | be", "ta |", "|---|---|", "| x | y |"}},
		{"wraps words to width", 20, "one two three four five six\n", []string{"one two three four", "five six"}},
		{"hanging indent for list items", 16, "- alpha beta gamma delta\n", []string{"• alpha beta", "  gamma delta"}},
		{"tabs expand", 0, "\tx\n", []string{"    x"}},
		{"crlf", 0, "a\r\nb\r\n", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := NewMarkdown(th, tt.width)
			lines := append(md.Write(tt.in), md.Flush()...)
			for i := range lines {
				lines[i] = ansi.Strip(lines[i])
				if tt.width > 0 && ansi.StringWidth(lines[i]) > tt.width {
					t.Errorf("line %q is wider than %d", lines[i], tt.width)
				}
			}
			if diff := cmp.Diff(tt.want, lines); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMarkdownPlainPassesThrough(t *testing.T) {
	md := NewMarkdown(NewTheme(io.Discard, ColorNone), 0)
	in := "# T\n**b** `c`\n```\nx\n```\n"
	got := strings.Join(append(md.Write(in), md.Flush()...), "\n") + "\n"
	if got != in {
		t.Errorf("plain output = %q, want the input unchanged", got)
	}
}

func TestColorDiff(t *testing.T) {
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-old\n+new\n same\n"
	if got := ColorDiff(NewTheme(io.Discard, ColorNone), diff); got != diff {
		t.Errorf("ColorNone changed the diff: %q", got)
	}
	got := ColorDiff(NewTheme(io.Discard, ColorFull), diff)
	if ansi.Strip(got) != diff {
		t.Errorf("colouring changed the text: %q", ansi.Strip(got))
	}
	for _, want := range []string{"\x1b[38;5;42m+new", "\x1b[38;5;203m-old", "\x1b[38;5;38m@@", "\x1b[1m--- a/x.go"} {
		if !strings.Contains(got, want) {
			t.Errorf("coloured diff lacks %q:\n%q", want, got)
		}
	}
	mono := ColorDiff(NewTheme(io.Discard, ColorMono), diff)
	if strings.Contains(mono, "38;5") {
		t.Errorf("mono (NO_COLOR) diff has colours: %q", mono)
	}
}

func TestDetectColor(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	tests := []struct {
		env  func(string) (string, bool)
		want Color
	}{
		{env("TERM", "xterm-256color"), ColorFull},
		{env("TERM", "xterm", "NO_COLOR", ""), ColorMono},
		{env("NO_COLOR", "1"), ColorMono},
		{env("TERM", "dumb"), ColorNone},
	}
	for i, tt := range tests {
		if got := DetectColor(tt.env); got != tt.want {
			t.Errorf("case %d: DetectColor = %v, want %v", i, got, tt.want)
		}
	}
}
