package term

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

func TestCurrentToken(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind byte
		text string
	}{
		{"/", '/', "/"},
		{"/mo", '/', "/mo"},
		{"/mode plan", 0, ""},
		{"look at @int", '@', "@int"},
		{"@", '@', "@"},
		{"line one\n@a/b", '@', "@a/b"},
		{"mail me@x", 0, ""},
		{"plain words", 0, ""},
	} {
		tok := currentToken(c.in)
		if tok.kind != c.kind || tok.text != c.text {
			t.Errorf("currentToken(%q) = %c %q, want %c %q", c.in, tok.kind, tok.text, c.kind, c.text)
		}
		if tok.kind != 0 && c.in[tok.start:] != tok.text {
			t.Errorf("currentToken(%q): start %d does not point at %q", c.in, tok.start, tok.text)
		}
	}
}

func TestCommandCompletions(t *testing.T) {
	cs := commandCompletions("q", []Command{{Name: "quota", Usage: "/quota [N]", Description: "mine"}}, []CustomCommand{{Name: "quick", Description: "custom", ArgumentHint: "[file]"}})
	var got []string
	for _, c := range cs {
		got = append(got, c.Text+"="+c.Desc)
	}
	want := []string{"/queue=[rm N | clear] — " + builtinHelp["queue"].desc, "/quit=" + builtinHelp["quit"].desc, "/quota=[N] — mine", "/quick=[file] — custom"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("completion %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestAccept(t *testing.T) {
	cs := []completion{{Text: "/queue", Final: true}, {Text: "/quit", Final: true}}
	tok := currentToken("/q")
	if got := accept("/q", tok, cs, 1); got != "/qu" {
		t.Errorf("Tab on a shared prefix = %q, want /qu", got)
	}
	tok = currentToken("/qu")
	if got := accept("/qu", tok, cs, 1); got != "/quit " {
		t.Errorf("Tab with nothing shared left = %q, want the selected /quit", got)
	}
	tok = currentToken("see @tt")
	if got := accept("see @tt", tok, []completion{{Text: "@internal/term/tty.go", Final: true}}, 0); got != "see @internal/term/tty.go " {
		t.Errorf("Tab on a mention = %q", got)
	}
}

func TestMentionCompletionsFuzzy(t *testing.T) {
	files := []string{"README.md", "internal/term/tty.go", "internal/term/tty_test.go", "cmd/odin/main.go"}
	cs := mentionCompletions("termtty", files)
	if len(cs) != 2 || cs[0].Text != "@internal/term/tty.go" {
		t.Fatalf("fuzzy completions for termtty = %+v, want tty.go first then tty_test.go", cs)
	}
	if cs := mentionCompletions("", files); len(cs) != len(files) {
		t.Errorf("an empty query lists %d files, want %d", len(cs), len(files))
	}
	if cs := mentionCompletions("zzz", files); len(cs) != 0 {
		t.Errorf("no file matches zzz, got %+v", cs)
	}
}

// TestUIMenu: the menu follows the typing, Tab completes, ↓ moves the
// highlight, and an input recalled from history opens no menu, so ↑ keeps
// walking the history.
func TestUIMenu(t *testing.T) {
	f := newFake("s1", nil)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "docs/guide.md"), "# Guide\n")
	tu := newTestUI(t, f, Options{Root: root})
	tu.typeText("first words")
	tu.key(tea.KeyEnter)
	tu.typeText("/qu")
	if v := tu.view(); !strings.Contains(v, "› /queue") || !strings.Contains(v, "/quit") || !strings.Contains(v, builtinHelp["quit"].desc) {
		t.Fatalf("the menu for /qu:\n%s", v)
	}
	tu.key(tea.KeyDown)
	tu.key(tea.KeyTab)
	if got := tu.m.ta.Value(); got != "/quit " {
		t.Errorf("↓ Tab on /qu gave %q, want /quit", got)
	}
	if v := tu.view(); strings.Contains(v, "/queue") {
		t.Errorf("the menu stays open after a command was completed:\n%s", v)
	}
	tu.key(tea.KeyCtrlC) // clear
	tu.typeText("/he")
	tu.key(tea.KeyEsc)
	if len(tu.m.menu) != 0 || strings.Contains(tu.view(), "show commands and keys") {
		t.Errorf("Esc left the menu open:\n%s", tu.view())
	}
	tu.typeText("l")
	if len(tu.m.menu) != 1 {
		t.Errorf("typing after Esc did not reopen the menu: %v", tu.m.menu)
	}
	tu.key(tea.KeyCtrlC)
	tu.typeText("read @gde")
	// The listing runs off the loop; wait for it as the UI would.
	for i := 0; i < 500 && len(tu.m.files.list(t.Context(), tu.now, nil)) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	tu.do(filesMsg{})
	tu.key(tea.KeyTab)
	if got := tu.m.ta.Value(); got != "read @docs/guide.md " {
		t.Errorf("Tab on @gde gave %q", got)
	}
	tu.key(tea.KeyEnter)
	sub, _, _, _ := f.snapshot()
	if len(sub) != 2 || !strings.Contains(sub[1].Body, "# Guide") {
		t.Fatalf("submitted %+v, want the guide attached", sub)
	}
	if p := tu.printed(); !strings.Contains(p, "attached @docs/guide.md") {
		t.Errorf("no note of the attachment:\n%s", p)
	}
	tu.typeText("/mode")
	tu.key(tea.KeyEnter)
	tu.key(tea.KeyUp)
	tu.key(tea.KeyUp) // "read @docs/guide.md" ends with a mention
	if got := tu.m.ta.Value(); got != "read @docs/guide.md" || len(tu.m.menu) != 0 {
		t.Fatalf("↑ ↑ recalled %q with menu %v", got, tu.m.menu)
	}
	tu.key(tea.KeyUp)
	if got := tu.m.ta.Value(); got != "first words" {
		t.Errorf("the third ↑ gave %q, want the first input", got)
	}
}

// BenchmarkMentionCompletions is the cost of one keystroke after @ in a
// project as large as the file list allows: the menu is recomputed on
// every key, on the UI loop.
func BenchmarkMentionCompletions(b *testing.B) {
	files := make([]string, maxMentionFiles)
	for i := range files {
		files[i] = fmt.Sprintf("pkg%03d/sub%02d/file_%05d.go", i%500, i%37, i)
	}
	for b.Loop() {
		mentionCompletions("pkg42file9", files)
	}
}

// TestUIMentionRankedOffLoop: a project with more files than the UI loop
// ranks itself gets its @ menu from the matcher, for the word still
// being typed.
func TestUIMentionRankedOffLoop(t *testing.T) {
	root := t.TempDir()
	for i := range syncMentionFiles + 10 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("d%02d/f%04d.txt", i%50, i)), "x")
	}
	writeFile(t, filepath.Join(root, "deep/needle_target.go"), "package deep")
	tu := newTestUI(t, newFake("s1", nil), Options{Root: root})
	msgs := make(chan tea.Msg, 16)
	tu.m.send = func(msg tea.Msg) { msgs <- msg }
	tu.typeText("see @needltarg")
	deadline := time.After(10 * time.Second)
	for len(tu.m.menu) == 0 || tu.m.menuStale {
		select {
		case msg := <-msgs:
			tu.do(msg)
		case <-deadline:
			t.Fatalf("no menu for @needltarg; view:\n%s", tu.view())
		}
	}
	if got := tu.m.menu[0].Text; got != "@deep/needle_target.go" {
		t.Errorf("the first candidate is %q, want @deep/needle_target.go", got)
	}
	tu.key(tea.KeyTab)
	if got := tu.m.ta.Value(); got != "see @deep/needle_target.go " {
		t.Errorf("Tab gave %q", got)
	}
}
