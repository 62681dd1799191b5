package term

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// testUI is the REPL model without a terminal: keys go to Update, printed
// lines collect in the printer, commands run synchronously.
type testUI struct {
	t   *testing.T
	m   *ui
	now time.Time
}

func newTestUI(t *testing.T, f *fakeSession, o Options) *testUI {
	t.Helper()
	tu := &testUI{t: t, now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	o.Session, o.Out = f, io.Discard
	o.Now = func() time.Time { return tu.now }
	o.LookupEnv = func(string) (string, bool) { return "", false }
	if o.Mode == "" {
		o.Mode = messages.ModeEdit
	}
	m, notes := newUI(t.Context(), o)
	if len(notes) > 0 {
		t.Logf("notes: %q", notes)
	}
	m.send = func(tea.Msg) {}
	m.out = newPrinter(m.send)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	tu.m = m
	return tu
}

// do runs msg through Update and the commands it returns, recursively,
// the way Bubble Tea would (ticks excepted).
func (tu *testUI) do(msg tea.Msg) {
	_, cmd := tu.m.Update(msg)
	tu.run(cmd)
}

func (tu *testUI) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil, tickMsg:
	case tea.BatchMsg:
		for _, c := range msg {
			tu.run(c)
		}
	default:
		tu.do(msg)
	}
}

func (tu *testUI) typeText(s string) {
	for _, r := range s {
		tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func (tu *testUI) key(t tea.KeyType) { tu.do(tea.KeyMsg{Type: t}) }

func (tu *testUI) events(evs ...messages.Event) {
	var batch []messages.Envelope
	for _, ev := range evs {
		batch = append(batch, messages.Envelope{Event: ev})
	}
	tu.do(eventsMsg{gen: tu.m.gen, evs: batch})
}

// printed returns and clears what was printed, without styles.
func (tu *testUI) printed() string {
	p := tu.m.out
	p.mu.Lock()
	defer p.mu.Unlock()
	s := ansi.Strip(strings.Join(p.lines, "\n"))
	p.lines = nil
	return s
}

func (tu *testUI) view() string { return ansi.Strip(tu.m.View()) }

func TestUISubmitModesAndMultiLine(t *testing.T) {
	f := newFake("s", nil)
	tu := newTestUI(t, f, Options{})
	if v := tu.view(); !strings.Contains(v, "edit ❯") {
		t.Fatalf("prompt does not show the mode:\n%s", v)
	}
	tu.typeText("first")
	tu.key(tea.KeyEnter)
	tu.key(tea.KeyShiftTab) // edit → ask
	if v := tu.view(); !strings.Contains(v, "ask  ❯") {
		t.Errorf("prompt after Shift-Tab:\n%s", v)
	}
	tu.typeText(`line one\`)
	tu.key(tea.KeyEnter) // continuation, not sent
	tu.typeText("line two")
	tu.key(tea.KeyCtrlJ)
	tu.typeText("three")
	tu.do(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("pasted\r\nlines"), Paste: true})
	tu.key(tea.KeyEnter)
	tu.key(tea.KeyShiftTab)
	tu.key(tea.KeyShiftTab) // → edit
	tu.typeText("/mode plan")
	tu.key(tea.KeyEnter)
	tu.typeText("  third  ")
	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("up")}) // fast typing: words, not keys
	tu.do(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")})
	tu.do(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("left")})
	tu.key(tea.KeyEnter)
	tu.key(tea.KeyEnter) // empty: nothing
	sub, _, _, _ := f.snapshot()
	type in struct {
		Body string
		Mode messages.Mode
	}
	var got []in
	for _, m := range sub {
		got = append(got, in{m.Body, m.Mode})
	}
	want := []in{{"first", messages.ModeEdit}, {"line one\nline two\nthree\npasted\nlines", messages.ModeAsk}, {"  third  up left", messages.ModePlan}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("submitted (-want +got):\n%s", diff)
	}
}

func TestUIHistoryNavigation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h, _ := LoadHistory(path, 0)
	h.Add("old one")
	h.Add("old\ntwo")
	tu := newTestUI(t, newFake("s", nil), Options{HistoryPath: path})
	tu.typeText("draft")
	tu.key(tea.KeyUp)
	if got := tu.m.ta.Value(); got != "old\ntwo" {
		t.Fatalf("up: %q", got)
	}
	tu.key(tea.KeyUp) // cursor is on the last line of a 2-line entry: moves up a line first
	tu.key(tea.KeyUp)
	if got := tu.m.ta.Value(); got != "old one" {
		t.Fatalf("up twice more: %q", got)
	}
	tu.key(tea.KeyUp) // at the oldest: stays
	if got := tu.m.ta.Value(); got != "old one" {
		t.Fatalf("past the oldest: %q", got)
	}
	tu.key(tea.KeyDown)
	tu.key(tea.KeyDown)
	if got := tu.m.ta.Value(); got != "draft" {
		t.Fatalf("down back to the draft: %q", got)
	}
	tu.key(tea.KeyEnter)
	again, _ := LoadHistory(path, 0)
	if diff := cmp.Diff([]string{"old one", "old\ntwo", "draft"}, again.Entries()); diff != "" {
		t.Errorf("persisted history (-want +got):\n%s", diff)
	}
}

func TestUIQueueStatusAndApprovals(t *testing.T) {
	f := newFake("s", nil)
	tu := newTestUI(t, f, Options{})
	run := messages.UserMessage{ID: "a", Body: "first task", Mode: messages.ModeEdit}
	q1 := messages.UserMessage{ID: "b", Body: "second task", Mode: messages.ModePlan}
	q2 := messages.UserMessage{ID: "c", Body: "third task", Mode: messages.ModeAsk}
	tu.events(messages.TurnStarted{Input: run}, messages.InputQueued{Input: q1, Position: 1}, messages.InputQueued{Input: q2, Position: 2})
	if p := tu.printed(); !strings.Contains(p, "❯ [edit] first task") {
		t.Errorf("turn start not printed:\n%s", p)
	}
	tu.now = tu.now.Add(3 * time.Second)
	tu.events(messages.AgentStarted{TaskID: "t1", Agent: "search", Description: "find the flag parser", Model: "m"},
		messages.ToolStarted{Origin: messages.Origin{Agent: "search", TaskID: "t1"}, Name: "Grep", Input: `{"pattern":"flag.Parse"}`},
		messages.AgentProgress{TaskID: "t1", Agent: "search", Tokens: 2345, ToolCalls: 3, Activities: []string{"Grep flag.Parse"}, Elapsed: 2 * time.Second})
	tu.do(tickMsg(tu.now))
	v := tu.view()
	for _, w := range []string{"odin waiting for agents", "search find the flag parser · 2s · 2.3k tok · 3 tools · Grep flag.Parse", "⏵ queued plan second task", "⏵ queued ask third task", "2 queued"} {
		if !strings.Contains(v, w) {
			t.Errorf("view lacks %q:\n%s", w, v)
		}
	}
	tu.typeText("/queue")
	tu.key(tea.KeyEnter)
	if p := tu.printed(); !strings.Contains(p, "1. [plan] second task") || !strings.Contains(p, "2. [ask] third task") {
		t.Errorf("/queue printed:\n%s", p)
	}
	tu.typeText("/queue rm 2")
	tu.key(tea.KeyEnter)
	if _, _, removed, _ := f.snapshot(); !cmp.Equal(removed, []string{"c"}) {
		t.Errorf("removed %v, want [c]", removed)
	}
	tu.typeText("/queue rm 9")
	tu.key(tea.KeyEnter)
	if p := tu.printed(); !strings.Contains(p, `no queued input "9"`) {
		t.Errorf("/queue rm 9 printed:\n%s", p)
	}
	tu.events(messages.InputRemoved{ID: "c"})
	if v := tu.view(); strings.Contains(v, "third task") {
		t.Errorf("removed input still shown:\n%s", v)
	}

	// Typing while an approval is open is a message, never an answer:
	// the letters of "yes any name" go to the input and Enter queues it.
	tu.events(messages.ApprovalRequested{ID: "ap1", Origin: messages.Origin{Agent: "code", TaskID: "t2"}, Tool: "ExecuteCommand", Subject: "rm -rf build", Reason: "rm is not an allowed command"})
	v = tu.view()
	for _, w := range []string{"approval needed: code asks to run ExecuteCommand", "rm -rf build", "why: rm is not an allowed command", "1 allow once · 2 allow for this session · 3 deny", "the number alone + Enter"} {
		if !strings.Contains(v, w) {
			t.Errorf("approval view lacks %q:\n%s", w, v)
		}
	}
	tu.typeText("yes any name")
	if got := tu.m.ta.Value(); got != "yes any name" {
		t.Errorf("typing during an approval: input = %q, want the text", got)
	}
	tu.key(tea.KeyEnter)
	sub, _, _, answers := f.snapshot()
	if len(answers) != 0 {
		t.Errorf("typed words answered the approval: %v", answers)
	}
	if len(sub) == 0 || sub[len(sub)-1].Body != "yes any name" {
		t.Errorf("typed text was not submitted as a message: %+v", sub)
	}
	// Enter on an empty input without a choice does not answer either.
	tu.key(tea.KeyEnter)
	tu.typeText("12")
	tu.key(tea.KeyEnter) // "12" is a message, not an answer
	if _, _, _, answers := f.snapshot(); len(answers) != 0 {
		t.Errorf("Enter without a choice answered: %v", answers)
	}
	// The arrows choose, Enter on the empty input answers.
	tu.key(tea.KeyDown)
	tu.key(tea.KeyDown)
	if v := tu.view(); !strings.Contains(v, "▸ 2 allow for this session") {
		t.Errorf("the choice is not shown:\n%s", v)
	}
	tu.key(tea.KeyEnter)
	if _, _, _, answers := f.snapshot(); answers["ap1"] != policy.AllowSession {
		t.Errorf("answer = %q, want session", answers["ap1"])
	}
	if p := tu.printed(); !strings.Contains(p, "allowed for this session: ExecuteCommand rm -rf build") {
		t.Errorf("answer not printed:\n%s", p)
	}
	// A digit alone on the line, then Enter.
	tu.events(messages.ApprovalRequested{ID: "ap2", Tool: "ExecuteCommand", Subject: "make deploy"})
	tu.typeText("3")
	tu.key(tea.KeyEnter)
	if _, _, _, answers := f.snapshot(); answers["ap2"] != policy.Reject {
		t.Errorf("answer = %q, want reject", answers["ap2"])
	}
	if tu.m.ta.Value() != "" {
		t.Errorf("the answer's digit stayed in the input: %q", tu.m.ta.Value())
	}

	tu.key(tea.KeyCtrlC)
	if _, cancels, _, _ := f.snapshot(); len(cancels) != 1 {
		t.Errorf("Ctrl-C while busy: cancels %q", cancels)
	}
	if tu.m.quitting {
		t.Fatalf("Ctrl-C while busy quit the REPL")
	}
	tu.events(messages.TurnFinished{Result: messages.TurnResult{Input: run, Status: messages.TurnCancelled, Error: "cancelled by the user (Ctrl-C)"}})
	if p := tu.printed(); !strings.Contains(p, "⏹ cancelled: cancelled by the user (Ctrl-C)") {
		t.Errorf("cancel not printed:\n%s", p)
	}
}

func TestUIInterruptAndEOF(t *testing.T) {
	tests := []struct {
		name  string
		keys  func(tu *testUI)
		quits bool
	}{
		{"one Ctrl-C arms", func(tu *testUI) { tu.key(tea.KeyCtrlC) }, false},
		{"two Ctrl-C quit", func(tu *testUI) { tu.key(tea.KeyCtrlC); tu.key(tea.KeyCtrlC) }, true},
		{"Ctrl-C clears typed text first", func(tu *testUI) { tu.typeText("abc"); tu.key(tea.KeyCtrlC); tu.key(tea.KeyCtrlC) }, false},
		{"the window expires", func(tu *testUI) {
			tu.key(tea.KeyCtrlC)
			tu.now = tu.now.Add(3 * time.Second)
			tu.key(tea.KeyCtrlC)
		}, false},
		{"Ctrl-D on an empty line", func(tu *testUI) { tu.key(tea.KeyCtrlD) }, true},
		{"Ctrl-D with text deletes", func(tu *testUI) { tu.typeText("ab"); tu.key(tea.KeyLeft); tu.key(tea.KeyCtrlD) }, false},
		{"/quit", func(tu *testUI) { tu.typeText("/quit"); tu.key(tea.KeyEnter) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := newTestUI(t, newFake("s", nil), Options{})
			tt.keys(tu)
			if tu.m.quitting != tt.quits {
				t.Errorf("quitting = %v, want %v", tu.m.quitting, tt.quits)
			}
		})
	}
}

func TestUICommands(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "fix.md"), "---\ndescription: Fix an issue\nmode: plan\n---\nFix issue $1 now")
	writeFile(t, filepath.Join(dir, "help.md"), "shadowed by the built-in")
	f := newFake("s", nil)
	next := newFake("next", nil)
	ran := ""
	o := Options{CommandDirs: []string{dir},
		Commands: []Command{
			{Name: "undo", Idle: true, Description: "restore", Run: func(_ context.Context, args string) (Result, error) {
				ran = "undo " + args
				return Result{Text: "Restored **1** file"}, nil
			}},
			{Name: "resume", Idle: true, Run: func(context.Context, string) (Result, error) { return Result{Session: next, Text: "resumed"}, nil }},
		},
		NewSession: func(context.Context) (Session, error) { return newFake("fresh", nil), nil },
	}
	tu := newTestUI(t, f, o)
	tu.typeText("/help")
	tu.key(tea.KeyEnter)
	p := tu.printed()
	for _, w := range []string{"/mode [ask|plan|edit]", "/undo", "restore", "/fix", "Fix an issue", "Shift-Tab"} {
		if !strings.Contains(p, w) {
			t.Errorf("/help lacks %q:\n%s", w, p)
		}
	}
	tu.typeText("/fix 42")
	tu.key(tea.KeyEnter)
	if sub, _, _, _ := f.snapshot(); len(sub) != 1 || sub[0].Body != "Fix issue 42 now" || sub[0].Mode != messages.ModePlan {
		t.Errorf("custom command submitted %+v", sub)
	}
	// Idle commands wait for the turn.
	tu.events(messages.TurnStarted{Input: messages.UserMessage{ID: "x", Body: "b", Mode: messages.ModeEdit}})
	tu.printed()
	tu.typeText("/undo")
	tu.key(tea.KeyEnter)
	if ran != "" || !strings.Contains(tu.printed(), "a turn is running") {
		t.Errorf("/undo ran during a turn")
	}
	tu.events(messages.TurnFinished{Result: messages.TurnResult{Input: messages.UserMessage{ID: "x"}, Status: messages.TurnDone}})
	tu.printed()
	tu.typeText("/undo --force")
	tu.key(tea.KeyEnter)
	if ran != "undo --force" {
		t.Errorf("ran %q", ran)
	}
	if p := tu.printed(); !strings.Contains(p, "Restored 1 file") {
		t.Errorf("/undo output:\n%s", p)
	}
	tu.typeText("/bogus")
	tu.key(tea.KeyEnter)
	if p := tu.printed(); !strings.Contains(p, "unknown command /bogus") {
		t.Errorf("unknown command output:\n%s", p)
	}
	gen := tu.m.gen
	tu.typeText("/resume")
	tu.key(tea.KeyEnter)
	if tu.m.sess != next || tu.m.gen == gen {
		t.Fatalf("/resume did not switch the session")
	}
	// Late events of the old session are ignored.
	tu.do(eventsMsg{gen: gen, evs: []messages.Envelope{{Event: messages.TurnStarted{Input: messages.UserMessage{ID: "old"}}}}})
	if tu.m.act.Busy() {
		t.Errorf("an event of the replaced session was applied")
	}
	tu.typeText("/clear")
	tu.key(tea.KeyEnter)
	if tu.m.sess.ID() != "fresh" {
		t.Errorf("/clear kept session %s", tu.m.sess.ID())
	}
}

func TestUINarrowTerminal(t *testing.T) {
	tu := newTestUI(t, newFake("s", nil), Options{})
	tu.do(tea.WindowSizeMsg{Width: 30, Height: 10})
	tu.events(messages.TurnStarted{Input: messages.UserMessage{ID: "a", Body: "x", Mode: messages.ModeEdit}},
		messages.AgentStarted{TaskID: "t", Agent: "research", Description: "a very long description of the research task"},
		messages.TextDelta{Origin: messages.Origin{Agent: "orchestrator"}, Text: "a long answer line that must wrap to the terminal width\n"})
	tu.do(tickMsg(tu.now))
	for _, l := range strings.Split(tu.m.View(), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("live line %q is %d wide, terminal is 30", ansi.Strip(l), w)
		}
	}
	for _, l := range strings.Split(tu.printed(), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("printed line %q is %d wide, terminal is 30", l, w)
		}
	}
}

// The status area names project files relative to the project, as the
// transcript does; a file outside it keeps its absolute path.
func TestUIStatusPathsRelativeToProject(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	tu := newTestUI(t, newFake("s", nil), Options{Root: root})
	tu.events(messages.TurnStarted{Input: messages.UserMessage{ID: "a", Body: "fix", Mode: messages.ModeEdit}},
		messages.ToolStarted{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", Input: `{"file_path":"` + filepath.Join(root, "cmd", "main.go") + `"}`},
		messages.AgentStarted{TaskID: "t1", Agent: "code", Description: "edit"},
		messages.ToolStarted{Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Name: "EditTool", Input: `{"file_path":"` + filepath.Join(root, "api", "server.go") + `"}`},
		messages.AgentStarted{TaskID: "t2", Agent: "search", Description: "look"},
		messages.ToolStarted{Origin: messages.Origin{Agent: "search", TaskID: "t2"}, Name: "ReadFile", Input: `{"file_path":"/etc/hosts"}`})
	tu.do(tickMsg(tu.now))
	v := tu.view()
	for _, w := range []string{"EditTool " + filepath.Join("api", "server.go"), "ReadFile /etc/hosts"} {
		if !strings.Contains(v, w) {
			t.Errorf("status lacks %q:\n%s", w, v)
		}
	}
	if strings.Contains(v, root) {
		t.Errorf("status names the project root:\n%s", v)
	}
	// The Orchestrator's own tool line, before agents started.
	tu.events(messages.TurnFinished{}, messages.TurnStarted{Input: messages.UserMessage{ID: "b", Body: "again", Mode: messages.ModeEdit}},
		messages.ToolStarted{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", Input: `{"file_path":"` + filepath.Join(root, "go.mod") + `"}`})
	tu.do(tickMsg(tu.now))
	if v := tu.view(); !strings.Contains(v, "running ReadFile go.mod") {
		t.Errorf("orchestrator status lacks the relative path:\n%s", v)
	}
}

// odin attach to a project not on this machine: no Root (mentions off),
// but paths are still shown relative to the server's project.
func TestUIShowRootWithoutRoot(t *testing.T) {
	project := "/srv/remote/proj"
	tu := newTestUI(t, newFake("s", nil), Options{ShowRoot: project})
	tu.events(messages.TurnStarted{Input: messages.UserMessage{ID: "a", Body: "fix", Mode: messages.ModeEdit}},
		messages.ToolStarted{Origin: messages.Origin{Agent: "orchestrator"}, Name: "ReadFile", Input: `{"file_path":"/srv/remote/proj/go.mod"}`})
	tu.do(tickMsg(tu.now))
	if v := tu.view(); !strings.Contains(v, "running ReadFile go.mod") {
		t.Errorf("status lacks the relative path:\n%s", v)
	}
	if p := tu.printed(); strings.Contains(p, project) {
		t.Errorf("transcript names the project root:\n%s", p)
	}
	if tu.m.files.root != "" {
		t.Errorf("mentions read under %q, want none", tu.m.files.root)
	}
}
