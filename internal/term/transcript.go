package term

import (
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// transcript turns session events into the lines printed above the live
// area (or to stdout in line mode): the user's input as it starts, the
// answer as streamed Markdown, tool calls, specialists starting and
// finishing, gate decisions and stages, and the turn's result with its
// diff and usage. It is not safe for concurrent use.
type transcript struct {
	th       *Theme
	md       *Markdown
	streamed bool // the turn's answer was streamed
	// changed: the turn has changed files, so quality gates may follow
	// the Orchestrator's answer and make it interim; held is that answer,
	// kept back until the gate decision says whether it is the answer
	// (printed in full) or a note before the gates (one dim line).
	changed bool
	held    strings.Builder
	// shown is the answer text given to md since the turn started;
	// after a Resync, printed is the part of it on the screen and
	// resynced stops the live text: the turn's result prints the rest.
	shown    strings.Builder
	printed  string
	resynced bool
	usage    messages.Usage
	byAgent  map[string]messages.AgentUsage
	turns    int
	// budgets are the budgets the supervisor found spent, for /cost.
	budgets []messages.BudgetExceeded
	// root is the project: a tool call's files inside it are shown
	// relative to it, as odin run shows them.
	root string
}

func newTranscript(th *Theme, width int, root string) *transcript {
	return &transcript{th: th, md: NewMarkdown(th, width), byAgent: map[string]messages.AgentUsage{}, root: root}
}

func (t *transcript) setWidth(w int) { t.md.SetWidth(w) }

// event returns the lines ev prints.
func (t *transcript) event(ev messages.Event) []string {
	switch ev := ev.(type) {
	case messages.TurnStarted:
		t.md.Reset()
		t.streamed, t.changed, t.resynced = false, false, false
		t.held.Reset()
		t.shown.Reset()
		t.printed = ""
		return t.userLines(ev.Input)
	case messages.TextDelta:
		if ev.TaskID != "" || t.resynced {
			return nil
		}
		t.streamed = true
		if t.changed {
			t.held.WriteString(ev.Text)
			return nil
		}
		t.shown.WriteString(ev.Text)
		return t.md.Write(ev.Text)
	case messages.ToolStarted:
		if ev.TaskID != "" || strings.HasPrefix(ev.Name, "agent_") {
			return nil
		}
		// The REPL shows the Orchestrator's calls dim, whole: the
		// answer around them is what stands out.
		return append(append(t.release(), t.md.Flush()...), t.th.Paint(t.th.Dim, t.plain(present.DescribeIn(t.root, ev))))
	case messages.ToolFinished:
		if len(ev.Files) > 0 && !ev.Denied && !ev.IsError {
			t.changed = true
		}
		// A denial shows whole, even a specialist's: its second half
		// says how to allow the call. Other results of a specialist's
		// calls are its own business.
		if ev.TaskID != "" && !ev.Denied {
			return nil
		}
		return t.lines(present.Describe(ev))
	case messages.AgentStarted:
		return append(append(t.release(), t.md.Flush()...), t.lines(present.Describe(ev))...)
	case messages.BudgetExceeded:
		t.budgets = append(t.budgets, ev)
		return t.lines(present.Describe(ev))
	case messages.NoProgress, messages.AgentRestarted, messages.AgentFinished, messages.Retrying, messages.RateLimited,
		messages.Notice, messages.SessionFenced, messages.Compacted:
		return t.lines(present.Describe(ev))
	case messages.GateDecided:
		d := ev.Decision
		if !d.ReviewRequired && !d.QARequired {
			return append(t.release(), t.lines(present.Describe(ev))...)
		}
		// The gates may change the code; the answer written after them
		// is the answer, so this one is progress.
		return append(t.interimLine(), t.lines(present.Describe(ev))...)
	case messages.GateStage:
		if !ev.Done {
			return nil // the status area shows the running stage
		}
		return t.lines(present.Describe(ev))
	case messages.ApprovalResolved:
		return nil
	case messages.Resync:
		// The display fell behind (or the connection dropped) and
		// streamed text was skipped: what is on the screen stays, the
		// partial line goes, and the turn's result prints the rest.
		if !t.resynced {
			t.printed = t.shown.String()[:t.md.Emitted()]
		}
		t.md.Reset()
		t.held.Reset()
		t.shown.Reset()
		t.streamed, t.resynced = false, true
		return t.lines(present.Describe(ev))
	case messages.TurnFinished:
		return t.finished(ev.Result)
	}
	return nil
}

// maxEcho is how many lines of an input are echoed when its turn starts;
// custom commands expand to long prompts.
const maxEcho = 6

func (t *transcript) userLines(in messages.UserMessage) []string {
	th := t.th
	// Files attached by @ mentions are the model's to read, not echoed.
	body, _, attached := strings.Cut(in.Body, attachedFilesTag)
	lines := strings.Split(strings.TrimRight(termsafe.Text(body), "\n"), "\n")
	if attached {
		lines[len(lines)-1] += th.Paint(th.Dim, " (+ attached files)")
	}
	head := th.Paint(th.Accent, "❯ ") + th.Paint(th.Dim, "["+string(in.Mode)+"] ")
	if in.Agent != "" {
		// A command ran an agent directly (/init): its brief is long and
		// not the user's words.
		return []string{"", head + th.Paint(th.User, termsafe.Line(in.Agent)+" agent") + th.Paint(th.Dim, ": "+oneLine(lines[0], 80))}
	}
	out := []string{""}
	for i, l := range lines {
		if i == maxEcho && len(lines) > maxEcho+1 {
			out = append(out, th.Paint(th.Dim, fmt.Sprintf("  … %d more lines", len(lines)-maxEcho)))
			break
		}
		if i == 0 {
			out = append(out, head+th.Paint(th.User, l))
			continue
		}
		out = append(out, "  "+th.Paint(th.User, l))
	}
	for _, im := range in.Images {
		out = append(out, "  "+th.Paint(th.Dim, present.ImageLabel(im)))
	}
	return out
}

// rest prints answer but for what a Resync left on the screen, when the
// answer begins with it; the renderer is fed that part first, so a code
// fence it opened is still open.
func (t *transcript) rest(answer string) []string {
	if p := t.printed; p != "" && strings.HasPrefix(answer, p) {
		t.md.Write(p)
		answer = answer[len(p):]
	}
	t.printed = ""
	return append(t.md.Write(answer), t.md.Flush()...)
}

// release prints the held answer in full: it was the Orchestrator's
// narration before a tool call, or the answer itself.
func (t *transcript) release() []string {
	if t.held.Len() == 0 {
		return nil
	}
	text := t.held.String()
	t.held.Reset()
	t.shown.WriteString(text)
	return t.md.Write(text)
}

// interimLine turns the held answer into one dim progress line.
func (t *transcript) interimLine() []string {
	text := strings.TrimSpace(t.held.String())
	t.held.Reset()
	if text == "" {
		return nil
	}
	line := "  ⋯ odin (before the gates): " + firstLine(text)
	if w := t.md.width; w > 8 && ansi.StringWidth(line) > w {
		line = ansi.Truncate(line, w, "…")
	}
	return []string{t.th.Paint(t.th.Dim, line)}
}

func (t *transcript) finished(res messages.TurnResult) []string {
	th := t.th
	var out []string
	if res.Interim != "" {
		out = t.interimLine()
	} else {
		out = t.release()
	}
	out = append(out, t.md.Flush()...)
	// An answer synthesized after quality gates is printed after the gate
	// report; what streamed before the gates was an interim note.
	synthesized := res.Interim != ""
	if !t.streamed && res.Answer != "" && !synthesized {
		out = append(out, t.rest(strings.TrimRight(res.Answer, "\n")+"\n")...)
	}
	switch res.Status {
	case messages.TurnCancelled:
		out = append(out, th.Paint(th.Warn, "⏹ cancelled")+th.Paint(th.Dim, ": "+termsafe.Line(res.Error)))
	case messages.TurnFailed:
		out = append(out, th.Paint(th.Err, "✗ failed: ")+termsafe.Line(res.Error))
	case messages.TurnGateFailed:
		out = append(out, th.Paint(th.Err, "✗ quality gates failed: ")+termsafe.Line(res.Error))
	}
	if res.PlanFile != "" {
		out = append(out, "", "Plan saved to "+th.Paint(th.Bold, termsafe.Line(res.PlanFile)))
	}
	if len(res.Files) > 0 {
		out = append(out, "", th.Paint(th.Bold, fmt.Sprintf("Files changed (%d):", len(res.Files))))
		for _, f := range res.Files {
			out = append(out, "  "+termsafe.Line(f))
		}
		if res.Diff != "" {
			out = append(out, "")
			for _, l := range strings.Split(strings.TrimRight(ColorDiff(th, termsafe.Text(res.Diff)), "\n"), "\n") {
				out = append(out, hardwrap(l, t.md.width)...)
			}
		}
	}
	if g := res.Gates; g != nil {
		out = append(out, "")
		out = append(out, gateLines(th, g)...)
	}
	if synthesized && res.Answer != "" {
		out = append(out, "", th.Paint(th.Bold, "Answer:"))
		out = append(out, t.md.Write(strings.TrimRight(res.Answer, "\n")+"\n")...)
		out = append(out, t.md.Flush()...)
	}
	t.turns++
	t.usage = t.usage.Add(res.Usage)
	for _, u := range res.ByAgent {
		k := u.Agent + "\x00" + u.Model
		prev := t.byAgent[k]
		prev.Agent, prev.Model, prev.Usage = u.Agent, u.Model, prev.Usage.Add(u.Usage)
		t.byAgent[k] = prev
	}
	return append(out, t.lines(present.Describe(messages.TurnFinished{Result: res}))...)
}

func gateLines(th *Theme, g *messages.GateReport) []string {
	var out []string
	for _, l := range present.GateReport(g) {
		out = append(out, l.Indent()+l.Styled(paintTone(th)))
	}
	return out
}

// costLines renders /cost: this REPL's usage by agent and model.
func (t *transcript) costLines() []string {
	if t.turns == 0 {
		return []string{"No turns yet in this session."}
	}
	rows := make([]messages.AgentUsage, 0, len(t.byAgent))
	for _, u := range t.byAgent {
		rows = append(rows, u)
	}
	sort.Slice(rows, func(i, j int) bool {
		if (rows[i].Agent == "orchestrator") != (rows[j].Agent == "orchestrator") {
			return rows[i].Agent == "orchestrator"
		}
		return rows[i].Agent+rows[i].Model < rows[j].Agent+rows[j].Model
	})
	out := []string{fmt.Sprintf("Usage over %s:", present.Plural(t.turns, "turn"))}
	for _, u := range rows {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		out = append(out, fmt.Sprintf("  %-13s %-18s %8s in %7s cached %7s out  %s%s", u.Agent, u.Model, present.Tokens(u.PromptTokens), present.Tokens(u.CachedTokens), present.Tokens(u.CompletionTokens), present.Cost(u.Cost, u.CostUnknown), est))
	}
	out = append(out, fmt.Sprintf("  %-13s %-18s %8s in %7s cached %7s out  %s", "total", "", present.Tokens(t.usage.PromptTokens), present.Tokens(t.usage.CachedTokens), present.Tokens(t.usage.CompletionTokens), present.Cost(t.usage.Cost, t.usage.CostUnknown)))
	if len(t.budgets) > 0 {
		out = append(out, "Budgets spent:")
		for _, b := range t.budgets {
			who := "turn"
			if b.Agent != "" {
				who = b.Agent
			}
			out = append(out, fmt.Sprintf("  %-13s %s", termsafe.Line(who), termsafe.Line(b.Text())))
		}
	}
	return out
}

// paintTone styles a presentation tone in the theme.
func paintTone(th *Theme) func(present.Tone, string) string {
	return func(tone present.Tone, s string) string {
		switch tone {
		case present.Dim:
			return th.Paint(th.Dim, s)
		case present.Bold:
			return th.Paint(th.Bold, s)
		case present.Accent:
			return th.Paint(th.Accent, s)
		case present.OK:
			return th.Paint(th.OK, s)
		case present.Warn:
			return th.Paint(th.Warn, s)
		case present.Err:
			return th.Paint(th.Err, s)
		case present.Gate:
			return th.Paint(th.Gate, s)
		case present.Agent:
			return th.Agent(s)
		}
		return s
	}
}

// lines prints an event's line: indented, styled, its whole text
// wrapped under it to the width, its items dim one level deeper.
func (t *transcript) lines(l present.Line) []string {
	if l.Silent() {
		return nil
	}
	head := l.Indent() + l.Styled(paintTone(t.th))
	out := []string{head}
	if l.Whole != "" {
		w := ansi.StringWidth(head) + 1
		wrapped := WrapWords(l.Whole, t.md.width-w)
		out[0] += " " + wrapped[0]
		hang := strings.Repeat(" ", w)
		for _, more := range wrapped[1:] {
			out = append(out, hang+more)
		}
	}
	for _, it := range l.Items {
		out = append(out, t.th.Paint(t.th.Dim, l.Indent()+"    "+it))
	}
	return out
}

// plain is a line's text, indented and unstyled.
func (t *transcript) plain(l present.Line) string {
	if l.Silent() {
		return ""
	}
	return l.Indent() + l.Text()
}
