package term

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// tick is the status area's redraw period: elapsed times and the spinner
// change at most ten times a second, whatever the event rate.
const tick = 100 * time.Millisecond

// interruptWindow is how long a first Ctrl-C on an idle prompt arms the
// second one that quits.
const interruptWindow = 2 * time.Second

// Messages of the UI loop.
type (
	eventsMsg struct {
		gen int
		evs []messages.Envelope
	}
	tickMsg    time.Time
	cmdDoneMsg struct {
		name string
		res  Result
		err  error
	}
	infoMsg struct {
		text string
		warn bool
	}
	quitNowMsg struct{}
)

// printer prints lines above the live area in order. Bubble Tea runs each
// command in its own goroutine, so prints returned as commands could
// overtake each other; the printer is the single goroutine that sends
// them, in the order the UI queued them.
type printer struct {
	mu    sync.Mutex
	lines []string
	quit  bool
	wake  chan struct{}
	send  func(tea.Msg)
}

func newPrinter(send func(tea.Msg)) *printer {
	return &printer{wake: make(chan struct{}, 1), send: send}
}

func (p *printer) print(lines ...string) {
	if len(lines) == 0 {
		return
	}
	p.mu.Lock()
	for _, l := range lines {
		// The last guard: whatever a caller forgot to sanitize, only
		// Odin's SGR styling reaches the terminal.
		p.lines = append(p.lines, termsafe.Styled(l))
	}
	p.mu.Unlock()
	p.signal()
}

// quitAfter asks the printer to end the program once everything queued so
// far is printed.
func (p *printer) quitAfter() {
	p.mu.Lock()
	p.quit = true
	p.mu.Unlock()
	p.signal()
}

func (p *printer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *printer) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		lines, quit := p.lines, p.quit
		p.lines = nil
		p.mu.Unlock()
		if len(lines) > 0 {
			p.send(tea.Println(strings.Join(lines, "\n"))())
		}
		if quit {
			p.send(quitNowMsg{})
			return
		}
	}
}

// ui is the Bubble Tea model of the REPL.
type ui struct {
	ctx  context.Context
	o    Options
	th   *Theme
	send func(tea.Msg)
	out  *printer

	sess     Session
	gen      int
	stopPump context.CancelFunc

	tr        *transcript
	act       Activity
	queue     []messages.UserMessage
	approvals []messages.ApprovalRequested
	// choice is the answer chosen with the arrows for the approval whose
	// ID it names; Enter on an empty input gives it.
	choice approvalChoice
	// elicit is the MCP server's request for input being answered;
	// elicits wait behind it.
	elicit  *formState
	elicits []messages.ElicitationRequested

	mode   messages.Mode
	ta     textarea.Model
	width  int
	height int

	hist    *History
	histPos int
	draft   string

	custom  map[string]CustomCommand
	customs []CustomCommand
	cmds    map[string]Command

	// The completion menu (complete.go): candidates for the word being
	// typed, the highlighted one, and the word.
	menu    []completion
	menuSel int
	menuTok token
	files   *fileIndex
	ranker  matcher
	// menuStale: the menu shows the ranking of an earlier word while
	// the current one is ranked off the loop.
	menuStale bool
	// menuDismissed is the word whose menu Esc closed.
	menuDismissed token

	hint          string
	hintUntil     time.Time
	lastInterrupt time.Time
	running       string // slash command in progress
	frame         int
	ticking       bool
	status        []string // status lines, refreshed at most every tick
	partial       string
	quitting      bool
	// pasted are the images pasted (as file paths) since the last submit;
	// each is sent if its label is still in the input.
	pasted []messages.Image
}

func runTTY(ctx context.Context, o Options) (Session, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, notes := newUI(ctx, o)
	// 120 frames a second (Bubble Tea's maximum) halves the wait for the
	// next frame after a key; frames that change nothing write nothing.
	// Signals are the caller's: odin cancels the turn and saves the
	// session on SIGHUP/SIGTERM before ending the REPL through ctx.
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out), tea.WithFPS(120), tea.WithoutSignalHandler())
	m.send = p.Send
	m.out = newPrinter(p.Send)
	go m.out.run(ctx)
	m.out.print(o.Banner...)
	for _, n := range notes {
		m.out.print(m.th.Paint(m.th.Warn, "! "+n))
	}
	m.startPump()
	_, err := p.Run()
	if m.stopPump != nil {
		m.stopPump()
	}
	if errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	return m.sess, err
}

// newUI builds the model; the notes are problems to show at start
// (unreadable history, bad custom commands).
func newUI(ctx context.Context, o Options) (*ui, []string) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = messages.ModeEdit
	}
	th := NewTheme(o.Out, DetectColor(o.LookupEnv))
	th.SetAgentColors(o.AgentColors)
	m := &ui{ctx: ctx, o: o, th: th, sess: o.Session, mode: o.Mode, tr: newTranscript(th, 80, o.showRoot()),
		cmds: map[string]Command{}, custom: map[string]CustomCommand{}, width: 80, height: 24,
		files: &fileIndex{root: o.Root}, act: Activity{root: o.showRoot()}}
	m.ta = newTextarea(th, m)
	var notes []string
	h, err := LoadHistory(o.HistoryPath, 0)
	if err != nil {
		notes = append(notes, err.Error())
	}
	m.hist, m.histPos = h, h.Len()
	for _, c := range o.Commands {
		m.cmds[c.Name] = c
	}
	customs, errs := o.customCommands()
	for _, c := range customs {
		if _, taken := builtinHelp[c.Name]; taken || m.cmds[c.Name].Run != nil {
			notes = append(notes, fmt.Sprintf("custom command /%s (%s) is hidden by the built-in command", c.Name, c.Path))
			continue
		}
		m.custom[c.Name] = c
		m.customs = append(m.customs, c)
	}
	for _, e := range errs {
		notes = append(notes, e.Error())
	}
	return m, notes
}

func newTextarea(th *Theme, m *ui) textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.MaxWidth = 0
	ta.Placeholder = "Ask Odin, or /help"
	km := textarea.DefaultKeyMap
	// Enter sends; the REPL inserts newlines itself (Ctrl-J, Alt-Enter,
	// a trailing backslash). Ctrl-V would shell out for the clipboard:
	// terminals paste with bracketed paste instead.
	km.InsertNewline = key.NewBinding(key.WithDisabled())
	km.Paste = key.NewBinding(key.WithDisabled())
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ta.KeyMap = km
	st := textarea.Style{
		Base: th.NewStyle(), CursorLine: th.NewStyle(), CursorLineNumber: th.NewStyle(),
		EndOfBuffer: th.NewStyle(), LineNumber: th.NewStyle(), Placeholder: th.Dim,
		Prompt: th.NewStyle(), Text: th.NewStyle(),
	}
	ta.FocusedStyle, ta.BlurredStyle = st, st
	ta.Cursor.Style = th.Cursor
	ta.Cursor.TextStyle = th.NewStyle()
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.SetPromptFunc(7, func(line int) string {
		if line == 0 {
			return fmt.Sprintf("%s %s ", padRight(th.Mode(m.mode), string(m.mode), 4), th.Paint(th.Prompt, "❯"))
		}
		return "     " + th.Paint(th.Dim, "…") + " "
	})
	ta.SetHeight(1)
	ta.Focus()
	return ta
}

func padRight(styled, plain string, n int) string {
	if len(plain) >= n {
		return styled
	}
	return styled + strings.Repeat(" ", n-len(plain))
}

func (m *ui) Init() tea.Cmd {
	if m.o.Initial == "" {
		return nil
	}
	text := m.o.Initial
	return func() tea.Msg { return initialMsg(text) }
}

// initialMsg submits Options.Initial once the program runs.
type initialMsg string

// startPump subscribes to the session's events and feeds them to the UI
// in batches: whatever arrived while the UI was busy goes in one message,
// so a fast stream costs one update per batch, not per token.
func (m *ui) startPump() {
	if m.stopPump != nil {
		m.stopPump()
	}
	m.gen++
	ctx, cancel := context.WithCancel(m.ctx)
	m.stopPump = cancel
	gen, ch, send := m.gen, m.sess.Subscribe(ctx), m.send
	if pend := m.sess.Pending(); len(pend) > 0 {
		m.approvals = append(m.approvals[:0], pend...)
	}
	if el, ok := m.sess.(Elicitor); ok {
		for _, ev := range el.PendingElicitations() {
			_ = m.addElicitation(ev)
		}
	}
	go func() {
		for ev := range ch {
			batch := []messages.Envelope{ev}
		drain:
			for len(batch) < 512 {
				select {
				case ev, ok := <-ch:
					if !ok {
						break drain
					}
					batch = append(batch, ev)
				default:
					break drain
				}
			}
			send(eventsMsg{gen: gen, evs: batch})
		}
	}()
}

func (m *ui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.ta.SetWidth(max(msg.Width-1, 20))
		m.tr.setWidth(max(msg.Width-1, 20))
		m.refreshStatus()
		return m, nil
	case tea.KeyMsg:
		if m.quitting {
			return m, nil
		}
		menuOpen := len(m.menu) > 0
		cmd := m.key(msg)
		if (msg.Type == tea.KeyUp || msg.Type == tea.KeyDown) && !menuOpen {
			// An input recalled from history opens no menu: it would
			// take the next ↑ from the history.
			m.menu, m.menuTok = nil, token{}
		} else {
			m.updateMenu()
		}
		return m, cmd
	case filesMsg:
		m.updateMenu()
		return m, nil
	case mentionMsg:
		m.mentionRanked(msg)
	case resourcesMsg:
		m.resourcesRead(msg)
		return m, nil
	case eventsMsg:
		if msg.gen != m.gen {
			return m, nil // a replaced session's late events
		}
		m.events(msg.evs)
		return m, m.ensureTick()
	case tickMsg:
		m.frame++
		m.refreshStatus()
		if m.needTick() {
			return m, tea.Tick(tick, func(t time.Time) tea.Msg { return tickMsg(t) })
		}
		m.ticking = false
		return m, nil
	case cmdDoneMsg:
		return m, m.commandDone(msg)
	case infoMsg:
		m.info(msg.text, msg.warn)
		return m, nil
	case quitNowMsg:
		return m, tea.Quit
	case initialMsg:
		m.ta.SetValue(string(msg))
		return m, m.submit()
	}
	return m, nil
}

func (m *ui) now() time.Time { return m.o.Now() }

func (m *ui) needTick() bool {
	return m.act.Busy() || m.running != "" || (m.hint != "" && m.now().Before(m.hintUntil))
}

func (m *ui) ensureTick() tea.Cmd {
	if m.ticking || !m.needTick() {
		return nil
	}
	m.ticking = true
	return tea.Tick(tick, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *ui) refreshStatus() {
	m.status = m.act.Lines(m.th, m.now(), max(m.width-1, 20), m.frame)
	m.partial = m.tr.md.Partial()
	if m.hint != "" && !m.now().Before(m.hintUntil) {
		m.hint = ""
	}
}

// print prints lines above the live area, wrapped to the terminal: a line
// the terminal wrapped itself would leave part of the old live area on
// screen.
func (m *ui) print(lines ...string) {
	w := max(m.width-1, 20)
	out := lines[:0:0]
	for _, l := range lines {
		if ansi.StringWidth(l) <= w {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(l, w, ""), "\n")...)
	}
	m.out.print(out...)
}

// info prints a line from the REPL itself.
func (m *ui) info(text string, warn bool) {
	st := m.th.Dim
	if warn {
		st = m.th.Warn
	}
	for _, l := range strings.Split(text, "\n") {
		m.print(m.th.Paint(st, l))
	}
}

// flash shows a short-lived hint under the input.
func (m *ui) flash(s string) tea.Cmd {
	m.hint, m.hintUntil = s, m.now().Add(interruptWindow)
	return m.ensureTick()
}

func (m *ui) events(evs []messages.Envelope) {
	for _, env := range evs {
		ev := env.Event
		wasBusy := m.act.Busy()
		m.act.Apply(ev, m.now())
		switch ev := ev.(type) {
		case messages.InputQueued:
			m.queue = append(m.queue, ev.Input)
		case messages.InputRemoved:
			m.dropQueued(ev.ID)
		case messages.TurnStarted:
			m.dropQueued(ev.Input.ID)
		case messages.ApprovalRequested:
			// Pending() at subscription time may already hold it.
			if !slices.ContainsFunc(m.approvals, func(a messages.ApprovalRequested) bool { return a.ID == ev.ID }) {
				m.approvals = append(m.approvals, ev)
			}
		case messages.ElicitationRequested:
			_ = m.addElicitation(ev)
		case messages.ElicitationResolved:
			m.dropElicitation(ev.ID, ev.Action)
		case messages.ApprovalResolved:
			// Still on screen: answered by someone else (another client of
			// the session, or a cancel), not by a key here.
			for i, a := range m.approvals {
				if a.ID == ev.ID {
					m.approvals = append(m.approvals[:i:i], m.approvals[i+1:]...)
					if m.choice.id == a.ID {
						m.choice = approvalChoice{}
					}
					what := strings.TrimSpace(a.Tool + " " + oneLine(a.Subject, 80))
					switch policy.Decision(ev.Decision) {
					case policy.Reject:
						m.print("    " + m.th.Paint(m.th.Warn, "⎿ not approved: ") + what)
					case policy.AllowOnce:
						m.print("    " + m.th.Paint(m.th.OK, "⎿ allowed once elsewhere: ") + what)
					case policy.AllowSession:
						m.print("    " + m.th.Paint(m.th.OK, "⎿ allowed for this session elsewhere: ") + what)
					}
					break
				}
			}
		}
		m.print(m.tr.event(ev)...)
		if wasBusy != m.act.Busy() {
			m.refreshStatus()
		}
	}
	m.partial = m.tr.md.Partial()
}

func (m *ui) dropQueued(id string) {
	for i, q := range m.queue {
		if q.ID == id {
			m.queue = append(m.queue[:i:i], m.queue[i+1:]...)
			return
		}
	}
}

// key handles one key press.
func (m *ui) key(k tea.KeyMsg) tea.Cmd {
	if len(m.approvals) > 0 {
		if cmd, ok := m.approvalKey(k); ok {
			return cmd
		}
	} else if m.elicit != nil && !k.Paste {
		if cmd, ok := m.elicitKey(k); ok {
			return cmd
		}
	}
	if m.menuKey(k) {
		return nil
	}
	if k.Paste {
		text := normalizeNewlines(string(k.Runes))
		var cmd tea.Cmd
		if im, ok, err := pastedImage(m.o.Root, text); ok {
			if err != nil {
				cmd = m.flash(err.Error())
			} else {
				// The picture waits beside the input, marked by its label;
				// deleting the label drops it.
				m.pasted = append(m.pasted, im)
				text = pastedLabel(len(m.pasted), im) + " "
			}
		}
		m.ta.InsertString(text)
		m.resize()
		return cmd
	}
	switch k.Type {
	case tea.KeyCtrlC:
		return m.interrupt()
	case tea.KeyEsc:
		if m.act.Busy() {
			m.sess.Cancel("cancelled by the user (Esc)")
			return m.flash("cancelling…")
		}
		return nil
	case tea.KeyCtrlD:
		if m.ta.Value() == "" {
			return m.quit()
		}
		k = tea.KeyMsg{Type: tea.KeyDelete}
	case tea.KeyEnter:
		if k.Alt {
			return m.newline()
		}
		v := m.ta.Value()
		if strings.HasSuffix(v, "\\") && m.ta.Line() == m.ta.LineCount()-1 {
			// A trailing backslash continues the input on a new line.
			m.ta.CursorEnd()
			m.ta.SetValue(strings.TrimSuffix(v, "\\") + "\n")
			m.resize()
			return nil
		}
		return m.submit()
	case tea.KeyCtrlJ:
		return m.newline()
	case tea.KeyShiftTab:
		m.mode = nextMode(m.mode)
		return m.flash("mode: " + string(m.mode))
	case tea.KeyCtrlL:
		return tea.ClearScreen
	case tea.KeyUp:
		if m.ta.Line() == 0 && m.ta.LineInfo().RowOffset == 0 {
			m.historyMove(-1)
			return nil
		}
	case tea.KeyDown:
		if m.ta.Line() == m.ta.LineCount()-1 && m.ta.LineInfo().RowOffset == m.ta.LineInfo().Height-1 {
			m.historyMove(+1)
			return nil
		}
	}
	if (k.Type == tea.KeyRunes || k.Type == tea.KeySpace) && !k.Alt {
		// Typed text is inserted as is: fast typing arrives as one
		// message per read, and the textarea would take the word "up"
		// or "left" for the arrow key of that name.
		m.ta.InsertString(string(k.Runes))
		m.resize()
		return nil
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(k)
	m.resize()
	return cmd
}

func nextMode(cur messages.Mode) messages.Mode {
	for i, md := range messages.Modes {
		if md == cur {
			return messages.Modes[(i+1)%len(messages.Modes)]
		}
	}
	return messages.Modes[0]
}

func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func (m *ui) newline() tea.Cmd {
	m.ta.InsertString("\n")
	m.resize()
	return nil
}

// resize fits the input's height to its content (at most 8 rows; the
// textarea scrolls beyond).
func (m *ui) resize() {
	w := m.ta.Width()
	if w <= 0 {
		w = 1
	}
	rows := 0
	for _, l := range strings.Split(m.ta.Value(), "\n") {
		rows += ansi.StringWidth(l)/w + 1
	}
	m.ta.SetHeight(min(max(rows, 1), 8))
}

// interrupt is Ctrl-C: cancel the running turn; on an idle prompt clear
// the input, and a second press within the window quits.
func (m *ui) interrupt() tea.Cmd {
	now := m.now()
	if m.act.Busy() || len(m.approvals) > 0 {
		if m.o.DetachOnInterrupt {
			if !m.lastInterrupt.IsZero() && now.Sub(m.lastInterrupt) <= interruptWindow {
				return m.quit()
			}
			m.sess.Cancel("cancelled by the user (Ctrl-C)")
			m.lastInterrupt = now
			return m.flash("cancelling… (Ctrl-C again detaches; queued inputs stay queued: /queue)")
		}
		m.sess.Cancel("cancelled by the user (Ctrl-C)")
		m.lastInterrupt = time.Time{}
		return m.flash("cancelling… (queued inputs stay queued: /queue)")
	}
	if m.ta.Value() != "" {
		m.ta.Reset()
		m.resize()
		m.histPos = m.hist.Len()
		return nil
	}
	if !m.lastInterrupt.IsZero() && now.Sub(m.lastInterrupt) <= interruptWindow {
		return m.quit()
	}
	m.lastInterrupt = now
	return m.flash("press Ctrl-C again to exit")
}

func (m *ui) quit() tea.Cmd {
	m.quitting = true
	m.out.quitAfter()
	return nil
}

func (m *ui) historyMove(d int) {
	n := m.hist.Len()
	pos := m.histPos + d
	if pos < 0 || pos > n {
		return
	}
	if m.histPos == n {
		m.draft = m.ta.Value()
	}
	m.histPos = pos
	if pos == n {
		m.ta.SetValue(m.draft)
	} else {
		m.ta.SetValue(m.hist.At(pos))
	}
	m.resize()
}

// approvalChoices are the answers to an approval, in the order of their
// digits (1, 2, 3) and of the arrows.
var approvalChoices = []struct {
	d     policy.Decision
	label string
}{
	{policy.AllowOnce, "allow once"},
	{policy.AllowSession, "allow for this session"},
	{policy.Reject, "deny"},
}

// approvalChoice is an arrow selection in the approval box: index n-1 of
// approvalChoices for the approval id (0 is none).
type approvalChoice struct {
	id string
	n  int
}

// approvalKey answers the approval on top when k is a deliberate answer:
// Enter on an input holding only its digit, or Enter on an empty input
// after choosing with the arrows (Esc on an empty input denies). Any other
// key is the user's typing and is not handled here (ok false), so text
// typed ahead while the box opens — "yes, and…", "any…" — lands in the
// input and is queued as a message, never read as an answer.
func (m *ui) approvalKey(k tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	a := m.approvals[0]
	if k.Paste {
		return nil, false
	}
	empty := m.ta.Value() == ""
	sel := 0
	if m.choice.id == a.ID {
		sel = m.choice.n
	}
	switch k.Type {
	case tea.KeyUp, tea.KeyDown:
		if !empty {
			return nil, false
		}
		switch {
		case sel == 0 && k.Type == tea.KeyUp:
			sel = len(approvalChoices)
		case sel == 0:
			sel = 1
		case k.Type == tea.KeyUp:
			sel = max(sel-1, 1)
		default:
			sel = min(sel+1, len(approvalChoices))
		}
		m.choice = approvalChoice{id: a.ID, n: sel}
		return nil, true
	case tea.KeyEsc:
		if !empty {
			return nil, true
		}
		return m.answerApproval(a, policy.Reject), true
	case tea.KeyEnter:
		if k.Alt {
			return nil, false
		}
		v := strings.TrimSpace(m.ta.Value())
		if len(v) == 1 && v[0] >= '1' && int(v[0]-'0') <= len(approvalChoices) {
			m.ta.Reset()
			m.resize()
			return m.answerApproval(a, approvalChoices[v[0]-'1'].d), true
		}
		if v != "" {
			return nil, false // a message: submitted (queued) as usual
		}
		if sel == 0 {
			return m.flash("type 1, 2 or 3 and press Enter, or choose with ↑/↓ and press Enter"), true
		}
		return m.answerApproval(a, approvalChoices[sel-1].d), true
	}
	return nil, false
}

// answerApproval sends the answer to the approval a and takes it off the
// screen.
func (m *ui) answerApproval(a messages.ApprovalRequested, d policy.Decision) tea.Cmd {
	m.approvals = m.approvals[1:]
	m.choice = approvalChoice{}
	label := map[policy.Decision]string{policy.AllowOnce: "allowed once", policy.AllowSession: "allowed for this session", policy.Reject: "denied"}[d]
	st := m.th.OK
	if d == policy.Reject {
		st = m.th.Warn
	}
	m.print("    " + m.th.Paint(st, "⎿ "+label+": ") + strings.TrimSpace(a.Tool+" "+oneLine(a.Subject, 80)))
	sess := m.sess
	return func() tea.Msg {
		if err := sess.Answer(a.ID, d); err != nil && !errors.Is(err, policy.ErrUnknownApproval) {
			return infoMsg{text: "approval: " + err.Error(), warn: true}
		}
		return nil
	}
}

// submit sends the input: a slash command runs, anything else goes to the
// Orchestrator, which queues it while a turn runs.
func (m *ui) submit() tea.Cmd {
	text := strings.TrimRight(m.ta.Value(), " \t\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.ta.Reset()
	m.resize()
	var cmd tea.Cmd
	if err := m.hist.Add(text); err != nil {
		cmd = m.flash(err.Error())
	}
	m.histPos = m.hist.Len()
	m.draft = ""
	if name, args, ok := splitCommand(text); ok {
		return tea.Batch(cmd, m.command(name, args))
	}
	return tea.Batch(cmd, m.submitWithMentions(text, m.mode))
}

// submitWithMentions sends what the user typed (or a custom command's
// prompt) with the files it mentions attached, saying which.
func (m *ui) submitWithMentions(text string, mode messages.Mode) tea.Cmd {
	body, images, notes := attachMentions(m.o.Root, m.o.DenyRead, text)
	images = append(m.takePasted(text), images...)
	for _, n := range notes {
		m.info(n, strings.HasPrefix(n, "!"))
	}
	if hasResourceMention(m.o.MCP, text) {
		// Reading a resource may start its server: off the UI loop.
		cat, ctx := m.o.MCP, m.ctx
		return func() tea.Msg {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			block, more, notes := attachResources(rctx, cat, text)
			return resourcesMsg{body: body + block, images: append(images, more...), notes: notes, mode: mode}
		}
	}
	m.sess.SubmitImages(body, mode, images)
	return nil
}

// resourcesMsg is an input whose MCP resources have been read.
type resourcesMsg struct {
	body   string
	images []messages.Image
	notes  []string
	mode   messages.Mode
}

func (m *ui) resourcesRead(msg resourcesMsg) {
	for _, n := range msg.notes {
		m.info(n, strings.HasPrefix(n, "!"))
	}
	m.sess.SubmitImages(msg.body, msg.mode, msg.images)
}

// command runs a slash command.
func (m *ui) command(name, args string) tea.Cmd {
	m.print("", m.th.Paint(m.th.Accent, "❯ ")+m.th.Paint(m.th.User, "/"+name+" "+args))
	switch name {
	case "help", "?":
		m.printText(helpText(slices.Concat(m.o.Commands, mcpCommands(m.o.MCP)), m.customs, true))
		return nil
	case "mode":
		if args == "" {
			m.info("mode: "+string(m.mode)+" (ask, plan or edit; Shift-Tab cycles)", false)
			return nil
		}
		md, err := messages.ParseMode(args)
		if err != nil {
			m.info(err.Error(), true)
			return nil
		}
		m.mode = md
		m.info("mode: "+string(md), false)
		return nil
	case "queue":
		return m.queueCommand(args)
	case "cost":
		m.printText(strings.Join(m.tr.costLines(), "\n"))
		return nil
	case "clear":
		if m.busy() {
			m.info("a turn is running: wait for it or cancel it (Ctrl-C) before /clear", true)
			return nil
		}
		if m.o.NewSession == nil {
			return tea.ClearScreen
		}
		return m.runAsync("clear", func(ctx context.Context) (Result, error) {
			s, err := m.o.NewSession(ctx)
			return Result{Session: s, Text: "Started a new conversation."}, err
		})
	case "quit", "exit", "q":
		return m.quit()
	}
	if c, ok := m.cmds[name]; ok {
		if c.Idle && m.busy() {
			m.info(fmt.Sprintf("a turn is running: wait for it or cancel it (Ctrl-C) before /%s", name), true)
			return nil
		}
		if m.running != "" {
			m.info(fmt.Sprintf("/%s is still running", m.running), true)
			return nil
		}
		return m.runAsync(name, func(ctx context.Context) (Result, error) { return c.Run(ctx, args) })
	}
	if c, ok := m.custom[name]; ok {
		mode := m.mode
		if c.Mode != "" {
			mode = c.Mode
		}
		return m.submitWithMentions(c.Expand(args), mode)
	}
	if c, ok := mcpCommand(m.o.MCP, name); ok {
		if m.running != "" {
			m.info(fmt.Sprintf("/%s is still running", m.running), true)
			return nil
		}
		return m.runAsync(name, func(ctx context.Context) (Result, error) { return c.Run(ctx, args) })
	}
	m.info(fmt.Sprintf("unknown command /%s (see /help)", name), true)
	return nil
}

func (m *ui) busy() bool { return m.act.Busy() || len(m.queue) > 0 }

func (m *ui) runAsync(name string, run func(ctx context.Context) (Result, error)) tea.Cmd {
	m.running = name
	ctx := m.ctx
	return tea.Batch(m.ensureTick(), func() tea.Msg {
		res, err := run(ctx)
		return cmdDoneMsg{name: name, res: res, err: err}
	})
}

func (m *ui) commandDone(msg cmdDoneMsg) tea.Cmd {
	m.running = ""
	if msg.err != nil {
		m.info(fmt.Sprintf("/%s: %v", msg.name, msg.err), true)
		return nil
	}
	var cmds []tea.Cmd
	if s := msg.res.Session; s != nil && s != m.sess {
		old := m.sess
		m.sess = s
		m.act, m.queue, m.approvals = Activity{root: m.o.showRoot()}, nil, nil
		m.elicit, m.elicits = nil, nil
		m.tr.md.Reset()
		m.startPump()
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(m.ctx), 5*time.Second)
			defer cancel()
			_ = old.Close(ctx)
		}()
		if msg.name == "clear" {
			cmds = append(cmds, tea.ClearScreen)
		}
	}
	if msg.res.Text != "" {
		m.printText(msg.res.Text)
	}
	if msg.res.Listing != "" {
		m.print(ListingLines(msg.res.Listing, max(m.width-1, 20))...)
	}
	if msg.res.Prompt != "" {
		m.sess.Submit(msg.res.Prompt, m.mode)
	}
	if msg.res.Quit {
		cmds = append(cmds, m.quit())
	}
	return tea.Batch(cmds...)
}

// ListingLines cuts each line of a listing at width with an ellipsis
// rather than wrapping it, so the columns of the lines below stay aligned.
func ListingLines(s string, width int) []string {
	lines := strings.Split(strings.TrimRight(termsafe.Text(s), "\n"), "\n")
	for i, l := range lines {
		if width > 0 && ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return lines
}

// printText prints command output as Markdown.
func (m *ui) printText(s string) {
	md := NewMarkdown(m.th, max(m.width-1, 20))
	lines := md.Write(strings.TrimRight(s, "\n") + "\n")
	m.print(append(lines, md.Flush()...)...)
}

func (m *ui) queueCommand(args string) tea.Cmd {
	f := strings.Fields(args)
	switch {
	case len(f) == 0:
		m.printText(queueText(m.queue))
		return nil
	case len(f) == 1 && f[0] == "clear":
		ids := make([]string, len(m.queue))
		for i, q := range m.queue {
			ids[i] = q.ID
		}
		return m.removeQueued(ids...)
	case len(f) == 2 && (f[0] == "rm" || f[0] == "remove" || f[0] == "del"):
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > len(m.queue) {
			m.info(fmt.Sprintf("no queued input %q: the queue has %d (see /queue)", f[1], len(m.queue)), true)
			return nil
		}
		return m.removeQueued(m.queue[n-1].ID)
	}
	m.info("usage: /queue, /queue rm N, /queue clear", true)
	return nil
}

func (m *ui) removeQueued(ids ...string) tea.Cmd {
	if len(ids) == 0 {
		m.info("The queue is empty.", false)
		return nil
	}
	sess, ctx := m.sess, m.ctx
	return func() tea.Msg {
		removed := 0
		for _, id := range ids {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			qs, err := sess.Remove(rctx, id)
			cancel()
			if err != nil {
				return infoMsg{text: "removing from the queue: " + err.Error(), warn: true}
			}
			gone := true
			for _, q := range qs.Queued {
				if q.ID == id {
					gone = false
				}
			}
			if gone {
				removed++
			}
		}
		if removed < len(ids) {
			return infoMsg{text: fmt.Sprintf("removed %d of %d: the others had started", removed, len(ids)), warn: true}
		}
		return infoMsg{text: fmt.Sprintf("removed %s", present.Plural(removed, "queued input"))}
	}
}

// View renders the live area: the answer line being streamed, the status
// of the running turn, the queue, an approval prompt, the input and a
// hint line.
func (m *ui) View() string {
	if m.quitting {
		return ""
	}
	th := m.th
	w := max(m.width-1, 20)
	var b strings.Builder
	if m.partial != "" {
		b.WriteString(Truncate(m.partial, w))
		b.WriteByte('\n')
	}
	for _, l := range m.status {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for i, q := range m.queue {
		if i == 3 && len(m.queue) > 4 {
			fmt.Fprintf(&b, "%s\n", th.Paint(th.Dim, fmt.Sprintf("  … and %d more queued (/queue)", len(m.queue)-3)))
			break
		}
		b.WriteString(Truncate(fmt.Sprintf("  %s %s %s", th.Paint(th.Dim, "⏵ queued"), th.Mode(q.Mode), oneLine(q.Body, 200)), w))
		b.WriteByte('\n')
	}
	if m.running != "" {
		fmt.Fprintf(&b, "%s\n", Truncate(th.Paint(th.Accent, spinner[m.frame%len(spinner)])+" /"+m.running+"…", w))
	}
	if len(m.approvals) > 0 {
		a := m.approvals[0]
		who := a.Agent
		if who == "" {
			who = "orchestrator"
		}
		bar := th.Paint(th.Warn, "│ ")
		what := "to run " + th.Paint(th.Bold, a.Tool)
		if a.Tool == "" {
			what = "for access to a path" // the path guard asks on its own
		}
		title := fmt.Sprintf("%s %s asks %s", th.Paint(th.Warn, "╭ approval needed:"), th.Paint(th.Bold, who), what)
		if len(m.approvals) > 1 {
			title += th.Paint(th.Dim, fmt.Sprintf(" (1 of %d)", len(m.approvals)))
		}
		b.WriteString(Truncate(title, w) + "\n")
		for _, l := range strings.Split(strings.TrimSpace(a.Subject), "\n") {
			for _, wl := range hardwrap(termsafe.Line(l), w-2) {
				b.WriteString(bar + th.Paint(th.Bold, wl) + "\n")
			}
		}
		if a.Reason != "" {
			// Wrapped, never cut: the reason often ends with the setting
			// that would allow the call.
			for i, l := range WrapWords("why: "+oneLine(a.Reason, 1000), w-7) {
				if i > 0 {
					l = "     " + l
				}
				b.WriteString(bar + th.Paint(th.Dim, l) + "\n")
			}
		}
		sel := 0
		if m.choice.id == a.ID {
			sel = m.choice.n
		}
		var opts []string
		for i, c := range approvalChoices {
			o := fmt.Sprintf("%d %s", i+1, c.label)
			if i+1 == sel {
				o = th.Paint(th.Accent, "▸ "+o)
			}
			opts = append(opts, o)
		}
		b.WriteString(Truncate(bar+strings.Join(opts, " · "), w) + "\n")
		b.WriteString(Truncate(th.Paint(th.Warn, "╰ ")+th.Paint(th.Dim, "answer: the number alone + Enter, or ↑/↓ + Enter; other typing is a message"), w) + "\n")
	}
	if m.elicit != nil && len(m.approvals) == 0 {
		b.WriteString(m.elicitView(w))
	}
	b.WriteString(m.ta.View())
	b.WriteByte('\n')
	b.WriteString(m.menuView(w))
	b.WriteString(Truncate(m.footer(), w))
	return termsafe.Styled(b.String())
}

func (m *ui) footer() string {
	th := m.th
	if m.hint != "" {
		return th.Paint(th.Warn, m.hint)
	}
	var parts []string
	switch {
	case len(m.approvals) > 0:
		parts = append(parts, "answer the approval above (1/2/3 + enter)", "enter queues text", "ctrl+c cancel the turn")
	case m.elicit != nil:
		parts = append(parts, "answer the MCP server's request above", "ctrl+c cancel the turn")
	case m.act.Busy():
		parts = append(parts, "esc/ctrl+c cancel", "enter queues")
	default:
		parts = append(parts, "shift+tab mode", "ctrl+j newline", "/help")
	}
	if n := len(m.queue); n > 0 {
		parts = append(parts, fmt.Sprintf("%d queued", n))
	}
	return th.Paint(th.Dim, "  "+strings.Join(parts, " · "))
}
