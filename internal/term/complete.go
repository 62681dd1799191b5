package term

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/sahilm/fuzzy"

	"github.com/odin-code/odin/internal/search"
	"github.com/odin-code/odin/internal/termsafe"
)

// menuRows bounds the completion menu shown under the input.
const menuRows = 8

// maxMentionFiles bounds the file list offered after @: a huge tree is
// still listed, only its least recently modified files are left out.
const maxMentionFiles = 50000

// filesTTL is how long a listing of the project serves @ completion
// before the next @ lists it again (files come and go during a session).
const filesTTL = 10 * time.Second

// completion is one entry of the menu: what replaces the token being
// typed, and the description shown beside it.
type completion struct {
	Text string
	Desc string
	// Final completions get a space after them when accepted (a command
	// name, a file); a directory would not.
	Final bool
}

// token is the word being completed: the text after the last blank of the
// input, which must be where the cursor is.
type token struct {
	kind  byte // '/' for a command name, '@' for a mention, 0 for none
	start int  // byte offset of the token in the input
	text  string
}

// currentToken finds the completable word at the end of value: a command
// name when the whole input is "/name" (no blank yet), a mention when the
// last word starts with @.
func currentToken(value string) token {
	if strings.HasPrefix(value, "/") && !strings.ContainsAny(value, " \t\n") {
		return token{kind: '/', text: value}
	}
	i := strings.LastIndexAny(value, " \t\n") + 1
	if w := value[i:]; strings.HasPrefix(w, "@") {
		return token{kind: '@', start: i, text: w}
	}
	return token{}
}

// commandCompletions lists the commands whose name starts with prefix
// (without the slash), built-ins first, then the caller's, then custom
// ones, each with its description.
func commandCompletions(prefix string, cmds []Command, custom []CustomCommand) []completion {
	var out []completion
	add := func(name, desc string) {
		if strings.HasPrefix(name, prefix) {
			out = append(out, completion{Text: "/" + name, Desc: desc, Final: true})
		}
	}
	// The arguments a usage line names ("/mode [ask|plan|edit]") lead
	// the description.
	withArgs := func(usage, desc string) string {
		if _, args, ok := strings.Cut(usage, " "); ok && args != "" {
			return args + " — " + desc
		}
		return desc
	}
	for _, n := range builtinOrder {
		add(n, withArgs(builtinHelp[n].usage, builtinHelp[n].desc))
	}
	for _, c := range cmds {
		add(c.Name, withArgs(c.Usage, c.Description))
	}
	for _, c := range custom {
		d := c.Description
		if c.ArgumentHint != "" {
			d = c.ArgumentHint + " — " + d
		}
		add(c.Name, firstLine(d))
	}
	return out
}

// fileIndex lists the project's files for @ completion: the same walker
// as Glob and Grep, so .gitignore, .ignore and hidden files are honoured
// alike. Listing runs off the UI loop; until it is done the menu is
// empty. Safe for concurrent use.
type fileIndex struct {
	root string

	mu      sync.Mutex
	files   []string // slash-separated, relative to root, newest first
	at      time.Time
	loading bool
}

// list returns the files known so far, starting a new listing when none
// was made or the last one is older than filesTTL; done is called (from
// another goroutine) when a listing finishes.
func (x *fileIndex) list(ctx context.Context, now time.Time, done func()) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.root != "" && !x.loading && (x.at.IsZero() || now.Sub(x.at) > filesTTL) {
		x.loading = true
		go x.load(ctx, done)
	}
	return x.files
}

func (x *fileIndex) load(ctx context.Context, done func()) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fs, err := search.Files(ctx, x.root, "", search.WalkOptions{})
	var rels []string
	if err == nil {
		rels = make([]string, 0, min(len(fs), maxMentionFiles))
		for _, f := range fs[:min(len(fs), maxMentionFiles)] {
			rels = append(rels, f.Rel)
		}
	}
	x.mu.Lock()
	x.loading = false
	x.at = time.Now()
	if err == nil {
		x.files = rels
	}
	x.mu.Unlock()
	if done != nil {
		done()
	}
}

// mentionCompletions ranks files against query (the token without its
// @): fuzzy, as editors' file pickers do, so "tmgo" finds
// internal/term/tty.go; an empty query lists the newest files.
func mentionCompletions(query string, files []string) []completion {
	var out []completion
	if query == "" {
		for _, f := range files[:min(len(files), menuRows)] {
			out = append(out, completion{Text: "@" + f, Final: true})
		}
		return out
	}
	ms := fuzzy.Find(query, files)
	// A stable order among equal scores: shorter paths first.
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Score != ms[j].Score {
			return ms[i].Score > ms[j].Score
		}
		return len(ms[i].Str) < len(ms[j].Str)
	})
	for _, mt := range ms[:min(len(ms), menuRows)] {
		out = append(out, completion{Text: "@" + mt.Str, Final: true})
	}
	return out
}

// commonPrefix is the longest prefix shared by every completion's text.
func commonPrefix(cs []completion) string {
	if len(cs) == 0 {
		return ""
	}
	p := cs[0].Text
	for _, c := range cs[1:] {
		for !strings.HasPrefix(c.Text, p) {
			p = p[:len(p)-1]
		}
	}
	for !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return p
}

// accept returns the input after Tab: the token extended to the longest
// prefix the candidates share when that adds something, otherwise
// replaced by the selected candidate (followed by a space when final).
func accept(value string, tok token, cs []completion, sel int) string {
	if len(cs) == 0 {
		return value
	}
	head := value[:tok.start]
	if p := commonPrefix(cs); len(cs) > 1 && len(p) > len(tok.text) {
		return head + p
	}
	c := cs[min(max(sel, 0), len(cs)-1)]
	if c.Final {
		return head + c.Text + " "
	}
	return head + c.Text
}

// filesMsg tells the UI a listing of the project finished.
type filesMsg struct{}

// syncMentionFiles is the largest file list ranked on the UI loop; a
// larger one is ranked by the matcher off the loop (50,000 paths take
// about 0.1 s: BenchmarkMentionCompletions), so typing never waits.
const syncMentionFiles = 2000

// mentionMsg carries the ranking of the mention tok.
type mentionMsg struct {
	tok   token
	items []completion
}

// matcher ranks mentions off the UI loop, one ranking at a time: while
// one runs, only the newest query waits, so fast typing does not pile up
// rankings of words already gone. Safe for concurrent use.
type matcher struct {
	mu   sync.Mutex
	busy bool
	next *mentionJob
}

type mentionJob struct {
	tok   token
	files []string
	send  func(tea.Msg)
}

func (mt *matcher) rank(j mentionJob) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if mt.busy {
		mt.next = &j
		return
	}
	mt.busy = true
	go func() {
		for {
			j.send(mentionMsg{tok: j.tok, items: mentionCompletions(strings.TrimPrefix(j.tok.text, "@"), j.files)})
			mt.mu.Lock()
			if mt.next == nil {
				mt.busy = false
				mt.mu.Unlock()
				return
			}
			j, mt.next = *mt.next, nil
			mt.mu.Unlock()
		}
	}()
}

// cursorAtEnd reports whether the input's cursor is after its last
// character: completion only edits the word being typed at the end.
func (m *ui) cursorAtEnd() bool {
	if m.ta.Line() != m.ta.LineCount()-1 {
		return false
	}
	end := m.ta
	end.CursorEnd()
	return end.LineInfo() == m.ta.LineInfo()
}

// updateMenu recomputes the completion menu after the input changed.
func (m *ui) updateMenu() {
	prev, prevMenu, stale := m.menuTok, m.menu, m.menuStale
	m.menu, m.menuTok, m.menuStale = nil, token{}, false
	if len(m.approvals) > 0 || !m.cursorAtEnd() {
		return
	}
	tok := currentToken(m.ta.Value())
	switch tok.kind {
	case '/':
		m.menu = commandCompletions(strings.TrimPrefix(tok.text, "/"), slices.Concat(m.o.Commands, mcpCommands(m.o.MCP)), m.customs)
	case '@':
		send := m.send
		files := m.files.list(m.ctx, m.now(), func() {
			if send != nil {
				send(filesMsg{})
			}
		})
		if res := resourceMentions(m.o.MCP); len(res) > 0 {
			files = slices.Concat(res, files)
		}
		if len(files) <= syncMentionFiles || send == nil {
			m.menu = mentionCompletions(strings.TrimPrefix(tok.text, "@"), files)
			break
		}
		if prev.kind == '@' {
			// Shown until the new ranking arrives, but not taken by Tab.
			m.menu, m.menuStale = prevMenu, stale || tok != prev
		}
		if tok != prev || len(prevMenu) == 0 {
			m.ranker.rank(mentionJob{tok: tok, files: files, send: send})
		}
	}
	m.menuTok = tok
	if tok == m.menuDismissed {
		m.menu = nil // closed with Esc until the word changes
		return
	}
	m.menuDismissed = token{}
	if tok != prev || m.menuSel >= len(m.menu) {
		m.menuSel = 0
	}
	// A command typed in full has nothing left to offer.
	if tok.kind == '/' && len(m.menu) == 1 && m.menu[0].Text == tok.text {
		m.menu = nil
	}
}

// mentionRanked shows a ranking made off the loop if its word is still
// the one being typed.
func (m *ui) mentionRanked(msg mentionMsg) {
	if msg.tok != m.menuTok || msg.tok == m.menuDismissed || !m.cursorAtEnd() {
		return
	}
	m.menu, m.menuStale = msg.items, false
	if m.menuSel >= len(m.menu) {
		m.menuSel = 0
	}
}

// menuKey handles Tab, ↑ and ↓ while the menu is open; false leaves the
// key to the input.
func (m *ui) menuKey(k tea.KeyMsg) bool {
	if len(m.menu) == 0 {
		return false
	}
	switch k.Type {
	case tea.KeyTab:
		if m.menuStale {
			return true // the ranking of this word is on its way
		}
		m.ta.SetValue(accept(m.ta.Value(), m.menuTok, m.menu, m.menuSel))
		m.resize()
		return true
	case tea.KeyEsc:
		if m.act.Busy() {
			return false // Esc cancels the turn first
		}
		m.menuDismissed, m.menu = m.menuTok, nil
		return true
	case tea.KeyUp:
		m.menuSel = (m.menuSel + len(m.menu) - 1) % len(m.menu)
		return true
	case tea.KeyDown:
		m.menuSel = (m.menuSel + 1) % len(m.menu)
		return true
	}
	return false
}

// menuView renders the menu under the input: each candidate with its
// description, the selected one marked.
func (m *ui) menuView(w int) string {
	if len(m.menu) == 0 {
		return ""
	}
	th := m.th
	width := 0
	for _, c := range m.menu {
		width = max(width, len([]rune(c.Text)))
	}
	width = min(width, w/2)
	// A window of menuRows candidates that keeps the highlighted one in
	// view.
	from := min(max(m.menuSel-menuRows+1, 0), max(len(m.menu)-menuRows, 0))
	to := min(from+menuRows, len(m.menu))
	var b strings.Builder
	for i := from; i < to; i++ {
		c := m.menu[i]
		mark, st := "  ", th.NewStyle()
		if i == m.menuSel {
			mark, st = th.Paint(th.Accent, "› "), th.Accent
		}
		line := mark + th.Paint(st, padRight(termsafe.Line(c.Text), termsafe.Line(c.Text), width))
		if c.Desc != "" {
			line += "  " + th.Paint(th.Dim, termsafe.Line(c.Desc))
		}
		b.WriteString(Truncate(line, w) + "\n")
	}
	if n := len(m.menu) - to; n > 0 {
		b.WriteString(th.Paint(th.Dim, fmt.Sprintf("  … %d more (↓)", n)) + "\n")
	}
	return b.String()
}
