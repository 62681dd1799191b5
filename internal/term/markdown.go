package term

import (
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/termsafe"
)

// Markdown renders streamed Markdown one completed line at a time, so an
// answer appears as it arrives without waiting for whole blocks. State that
// spans lines (an open code fence) is carried from line to line; inline
// styles (emphasis, code, links) are closed within their line, as they are
// in the answers models write. Lines are wrapped to the width, list items
// and quotes with a hanging indent. A Markdown is not safe for concurrent
// use.
type Markdown struct {
	th    *Theme
	width int
	line  strings.Builder
	fence string // the open fence ("```", "~~~~"); "" outside code
	// table holds the rows of a table being received: its columns are
	// sized once the whole table is there.
	table []string
	// emitted counts the bytes of input whose lines were returned since
	// the last Reset; tableIn the bytes of the rows held in table.
	emitted, tableIn int
}

// NewMarkdown returns a renderer for theme th wrapping at width (0: no
// wrapping). With a ColorNone theme lines pass through unchanged.
func NewMarkdown(th *Theme, width int) *Markdown {
	return &Markdown{th: th, width: width}
}

// SetWidth changes the wrapping width for the lines still to come.
func (m *Markdown) SetWidth(w int) { m.width = w }

// Write adds streamed text and returns the rendered lines it completed
// (a table's lines only once the table has ended).
func (m *Markdown) Write(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			m.line.WriteString(s)
			return out
		}
		m.line.WriteString(s[:i])
		n := m.line.Len() + 1
		out = append(out, m.renderLine(strings.TrimSuffix(m.line.String(), "\r"))...)
		m.line.Reset()
		if len(m.table) > 0 {
			m.tableIn += n // a row of a table still being received
		} else {
			m.emitted += m.tableIn + n
			m.tableIn = 0
		}
		s = s[i+1:]
	}
}

// Flush renders the incomplete last line, if any, and closes an open code
// fence so that the next answer starts clean.
func (m *Markdown) Flush() []string {
	var out []string
	n := m.line.Len()
	if n > 0 {
		out = m.renderLine(m.line.String())
		m.line.Reset()
	}
	out = append(out, m.flushTable()...)
	m.emitted += m.tableIn + n
	m.tableIn = 0
	m.fence = ""
	return out
}

// Emitted is how many bytes of the text written since the last Reset
// have been returned as lines: what is on the screen.
func (m *Markdown) Emitted() int { return m.emitted }

// Partial is the incomplete line received so far, unstyled: the live area
// shows it until the line is complete.
func (m *Markdown) Partial() string { return termsafe.Partial(m.line.String()) }

// InCode reports whether a code fence is open.
func (m *Markdown) InCode() bool { return m.fence != "" }

// Reset drops the incomplete line and the fence state.
func (m *Markdown) Reset() {
	m.line.Reset()
	m.fence = ""
	m.table = nil
	m.emitted, m.tableIn = 0, 0
}

var (
	reFence   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(`{3,}|~{3,})\\s*([^`\\s]*)[^`]*$") })
	reHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`) })
	reRule    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}([-*_])(?:\s*([-*_])){2,}\s*$`) })
	reQuote   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}>\s?(.*)$`) })
	reList    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$`) })
	reTable   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\|`) })
)

// renderLine sanitizes one line of model text, then styles it: the model's
// own escape sequences are gone before Odin's are added.
func (m *Markdown) renderLine(raw string) []string {
	th := m.th
	raw = strings.ReplaceAll(termsafe.Text(raw), "\n", " ")
	if th.level == ColorNone {
		return m.wrap(raw, "", "")
	}
	raw = strings.ReplaceAll(raw, "\t", "    ")
	if m.fence == "" && reTable().MatchString(raw) {
		m.table = append(m.table, raw)
		return nil
	}
	out := m.flushTable()
	return append(out, m.renderBlock(raw)...)
}

// renderBlock renders one line outside a table.
func (m *Markdown) renderBlock(raw string) []string {
	th := m.th
	if m.fence != "" {
		if t := strings.TrimSpace(raw); len(t) >= len(m.fence) && strings.Trim(t, m.fence[:1]) == "" {
			// The code's own style marks where it ends.
			m.fence = ""
			return nil
		}
		// Indented, so code stands apart without its fences.
		return hardwrap(th.Paint(th.CodeBlock, "  "+raw), m.width)
	}
	if g := reFence().FindStringSubmatch(raw); g != nil {
		m.fence = g[1]
		if g[2] == "" {
			return nil
		}
		// The language, as a label: the fence itself is markup.
		return []string{th.Paint(th.Dim, g[2])}
	}
	if g := reHeading().FindStringSubmatch(raw); g != nil {
		st := th.H3
		switch len(g[1]) {
		case 1:
			st = th.H1
		case 2:
			st = th.H2
		}
		return m.wrap(m.inline(g[2], &st), "", "")
	}
	if g := reRule().FindStringSubmatch(raw); g != nil && (g[2] == "" || g[2] == g[1]) {
		n := 40
		if m.width > 0 && m.width < n {
			n = m.width
		}
		return []string{th.Paint(th.Dim, strings.Repeat("─", n))}
	}
	if g := reQuote().FindStringSubmatch(raw); g != nil {
		bar := th.Paint(th.Dim, "│ ")
		return m.wrap(m.inline(g[1], &th.Quote), bar, bar)
	}
	if g := reList().FindStringSubmatch(raw); g != nil {
		indent, marker, rest := g[1], g[2], g[3]
		bullet := marker
		switch marker {
		case "-", "*", "+":
			bullet = "•"
			switch {
			case strings.HasPrefix(rest, "[ ] "):
				bullet, rest = "☐", rest[4:]
			case strings.HasPrefix(rest, "[x] "), strings.HasPrefix(rest, "[X] "):
				bullet, rest = "☑", rest[4:]
			}
		}
		head := indent + th.Paint(th.Accent, bullet) + " "
		hang := strings.Repeat(" ", len(indent)+ansi.StringWidth(bullet)+1)
		return m.wrap(m.inline(rest, nil), head, hang)
	}
	return m.wrap(m.inline(raw, nil), "", "")
}

// flushTable renders the held table rows: cells styled inline, columns
// padded to their widest cell, the header bold and ruled. A table wider
// than the terminal, or rows that are not a table after all, are printed
// as written (wrapped), since squeezing columns would garble them.
func (m *Markdown) flushTable() []string {
	rows := m.table
	m.table = nil
	if len(rows) == 0 {
		return nil
	}
	th := m.th
	var cells [][]string
	header := false
	for i, r := range rows {
		cs := tableCells(r)
		if i == 1 && isTableRule(cs) {
			header = true
			continue
		}
		cells = append(cells, cs)
	}
	cols := 0
	for _, cs := range cells {
		cols = max(cols, len(cs))
	}
	widths := make([]int, cols)
	styled := make([][]string, len(cells))
	for i, cs := range cells {
		styled[i] = make([]string, cols)
		for j := range cols {
			c := ""
			if j < len(cs) {
				c = cs[j]
			}
			if header && i == 0 {
				b := th.Bold
				c = m.inline(c, &b)
			} else {
				c = m.inline(c, nil)
			}
			styled[i][j] = c
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	total := 0
	for _, w := range widths {
		total += w + 3
	}
	if cols == 0 || (m.width > 0 && total-1 > m.width) {
		var out []string
		for _, r := range rows {
			out = append(out, hardwrap(r, m.width)...)
		}
		return out
	}
	sep := th.Paint(th.Dim, " │ ")
	var out []string
	for i, row := range styled {
		var b strings.Builder
		for j, c := range row {
			if j > 0 {
				b.WriteString(sep)
			}
			b.WriteString(c)
			if j < cols-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-ansi.StringWidth(c)))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
		if header && i == 0 {
			parts := make([]string, cols)
			for j, w := range widths {
				parts[j] = strings.Repeat("─", w)
			}
			out = append(out, th.Paint(th.Dim, strings.Join(parts, "─┼─")))
		}
	}
	return out
}

// tableCells splits a Markdown table row into its trimmed cells; an
// escaped pipe (\|) stays in its cell.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// isTableRule reports whether cells are a header rule (---, :--:).
func isTableRule(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return len(cells) > 0
}

// wrap word-wraps styled text to the width, the first line after head and
// the others after hang.
func (m *Markdown) wrap(s, head, hang string) []string {
	if m.width <= 0 {
		return []string{head + s}
	}
	w := m.width - ansi.StringWidth(head)
	if w < 10 {
		w = 10
	}
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = head + lines[i]
		} else {
			lines[i] = hang + lines[i]
		}
	}
	return lines
}

func hardwrap(s string, width int) []string {
	if width <= 0 {
		return []string{s}
	}
	return strings.Split(ansi.Hardwrap(s, width, true), "\n")
}

// inline flags.
type flags uint8

const (
	fBold flags = 1 << iota
	fItalic
	fStrike
	fCode
	fLink
	fDim
)

type span struct {
	text string
	f    flags
}

// inline renders the inline Markdown of one line over base.
func (m *Markdown) inline(s string, base *lipgloss.Style) string {
	var b strings.Builder
	for _, sp := range parseInline(s, 0, nil) {
		if sp.f == 0 && base == nil {
			b.WriteString(sp.text)
			continue
		}
		st := m.th.NewStyle()
		if base != nil {
			st = *base
		}
		switch {
		case sp.f&fCode != 0:
			st = m.th.Code
		case sp.f&fLink != 0:
			st = m.th.Link
		}
		if sp.f&fBold != 0 {
			st = st.Bold(true)
		}
		if sp.f&fItalic != 0 {
			st = st.Italic(true)
		}
		if sp.f&fStrike != 0 {
			st = st.Strikethrough(true)
		}
		if sp.f&fDim != 0 {
			st = st.Faint(true)
		}
		b.WriteString(st.Render(sp.text))
	}
	return b.String()
}

// parseInline splits one line of Markdown into styled spans: code spans,
// strong and emphasis (* and _, with intraword underscores literal),
// strikethrough, links and backslash escapes. Unclosed delimiters are
// literal text.
func parseInline(s string, f flags, out []span) []span {
	var plain strings.Builder
	flush := func() {
		if plain.Len() > 0 {
			out = append(out, span{plain.String(), f})
			plain.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_{}[]()#+-.!~|<>", s[i+1]) >= 0:
			plain.WriteByte(s[i+1])
			i += 2
			continue
		case c == '`':
			n := runOf(s, i, '`')
			if j := findRun(s, i+n, '`', n); j >= 0 {
				flush()
				out = append(out, span{trimCodeSpan(s[i+n : j]), f | fCode})
				i = j + n
				continue
			}
			plain.WriteString(s[i : i+n])
			i += n
			continue
		case (c == '*' || c == '_') && runOf(s, i, c) == 3:
			if canOpen(s, i, 3) {
				if j := findClose(s, i+3, s[i:i+3]); j >= 0 {
					flush()
					out = parseInline(s[i+3:j], f|fBold|fItalic, out)
					i = j + 3
					continue
				}
			}
			plain.WriteString(s[i : i+3])
			i += 3
			continue
		case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] == c:
			if canOpen(s, i, 2) {
				if j := findClose(s, i+2, s[i:i+2]); j >= 0 {
					flush()
					out = parseInline(s[i+2:j], f|fBold, out)
					i = j + 2
					continue
				}
			}
			plain.WriteString(s[i : i+2])
			i += 2
			continue
		case c == '*' || c == '_':
			if canOpen(s, i, 1) {
				if j := findClose(s, i+1, s[i:i+1]); j >= 0 {
					flush()
					out = parseInline(s[i+1:j], f|fItalic, out)
					i = j + 1
					continue
				}
			}
		case c == '~' && i+1 < len(s) && s[i+1] == '~':
			if canOpen(s, i, 2) {
				if j := findClose(s, i+2, "~~"); j >= 0 {
					flush()
					out = parseInline(s[i+2:j], f|fStrike, out)
					i = j + 2
					continue
				}
			}
		case c == '[':
			if text, url, end, ok := parseLink(s, i); ok {
				flush()
				out = parseInline(text, f|fLink, out)
				if url != text {
					out = append(out, span{" (" + url + ")", f | fDim})
				}
				i = end
				continue
			}
		}
		plain.WriteByte(c)
		i++
	}
	flush()
	return out
}

func runOf(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// findRun finds a run of exactly n c's at or after from.
func findRun(s string, from int, c byte, n int) int {
	for j := from; j < len(s); {
		if s[j] != c {
			j++
			continue
		}
		k := runOf(s, j, c)
		if k == n {
			return j
		}
		j += k
	}
	return -1
}

func trimCodeSpan(s string) string {
	if len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		return s[1 : len(s)-1]
	}
	return s
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// canOpen reports whether the n delimiters at i can open emphasis: they
// are followed by a non-space, and an underscore is not inside a word.
func canOpen(s string, i, n int) bool {
	if i+n >= len(s) || s[i+n] == ' ' || s[i+n] == s[i] {
		return false
	}
	return s[i] != '_' || i == 0 || !isWordByte(s[i-1])
}

// findClose finds the closing delimiter d after from: preceded by a
// non-space, and for underscores not followed by a word character.
func findClose(s string, from int, d string) int {
	// The scan starts at from itself: a code span right after the opener
	// (**`x`**) must be skipped whole, or its closing backtick would pair
	// with a later one.
	for j := from; j+len(d) <= len(s); j++ {
		if s[j] == '`' { // code spans bind tighter than emphasis
			if n := runOf(s, j, '`'); findRun(s, j+n, '`', n) >= 0 {
				j = findRun(s, j+n, '`', n) + n - 1
				continue
			}
		}
		if j == from || s[j:j+len(d)] != d || s[j-1] == ' ' {
			continue
		}
		if j+len(d) < len(s) && s[j+len(d)] == d[0] {
			continue // part of a longer run
		}
		if d[0] == '_' && j+len(d) < len(s) && isWordByte(s[j+len(d)]) {
			continue
		}
		return j
	}
	return -1
}

// parseLink parses [text](url) at i.
func parseLink(s string, i int) (text, url string, end int, ok bool) {
	close := strings.Index(s[i:], "](")
	if close < 0 {
		return "", "", 0, false
	}
	text = s[i+1 : i+close]
	if strings.ContainsAny(text, "[]") || text == "" {
		return "", "", 0, false
	}
	rest := s[i+close+2:]
	j := strings.IndexByte(rest, ')')
	if j < 0 || strings.ContainsAny(rest[:j], " \t") && !strings.Contains(rest[:j], "\"") {
		return "", "", 0, false
	}
	url = rest[:j]
	if k := strings.Index(url, " \""); k >= 0 {
		url = url[:k] // drop a title
	}
	return text, url, i + close + 2 + j + 1, true
}
