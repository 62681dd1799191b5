package term

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/llm"
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
}

func newTranscript(th *Theme, width int) *transcript {
	return &transcript{th: th, md: NewMarkdown(th, width), byAgent: map[string]messages.AgentUsage{}}
}

func (t *transcript) setWidth(w int) { t.md.SetWidth(w) }

// event returns the lines ev prints.
func (t *transcript) event(ev messages.Event) []string {
	th := t.th
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
		return append(append(t.release(), t.md.Flush()...), th.Paint(th.Dim, "  ⏺ "+ToolLabel(ev.Name, ev.Input)))
	case messages.ToolFinished:
		if len(ev.Files) > 0 && !ev.Denied && !ev.IsError {
			t.changed = true
		}
		if ev.Denied {
			// Whole, even a specialist's: its second half says how to
			// allow the call. The printer wraps it to the terminal.
			who := ""
			if ev.TaskID != "" {
				who = termsafe.Line(ev.Agent) + " "
			}
			head := "⎿ " + who + "denied: "
			lines := WrapWords(termsafe.Text(ev.Output), t.md.width-4-ansi.StringWidth(head))
			out := []string{"    " + th.Paint(th.Warn, head) + lines[0]}
			hang := strings.Repeat(" ", 4+ansi.StringWidth(head))
			for _, l := range lines[1:] {
				out = append(out, hang+l)
			}
			return out
		}
		if ev.TaskID != "" {
			return nil
		}
		switch {
		case ev.IsError:
			return []string{"    " + th.Paint(th.Warn, "⎿ error: ") + firstLine(ev.Output)}
		}
	case messages.AgentStarted:
		return append(append(t.release(), t.md.Flush()...), fmt.Sprintf("  %s %s %s", th.Paint(th.Accent, "▸"), th.Agent(ev.Agent), firstLine(ev.Description))+
			th.Paint(th.Dim, fmt.Sprintf(" (%s, deadline %s)", termsafe.Line(ev.Model), ev.Timeout)))
	case messages.BudgetExceeded:
		t.budgets = append(t.budgets, ev)
		who := "turn"
		if ev.Agent != "" {
			who = termsafe.Line(ev.Agent)
		}
		return []string{fmt.Sprintf("  %s %s stopped: %s", th.Paint(th.Err, "■"), who, termsafe.Line(ev.Text()))}
	case messages.NoProgress:
		return []string{fmt.Sprintf("  %s %s paused: %s", th.Paint(th.Warn, "‖"), termsafe.Line(ev.Agent), termsafe.Line(ev.Text()))}
	case messages.AgentRestarted:
		return []string{fmt.Sprintf("  %s %s crashed (%s); restart %d", th.Paint(th.Warn, "↻"), termsafe.Line(ev.Agent), firstLine(ev.Reason), ev.Restart)}
	case messages.AgentFinished:
		r := ev.Report
		ok, verdict := Verdict(r)
		mark := th.Paint(th.OK, "✓")
		if !ok {
			mark = th.Paint(th.Err, "✗")
		}
		summary := firstLine(r.Summary)
		if r.Status != messages.ReportOK && r.Error != "" {
			summary = firstLine(r.Error)
		}
		return []string{fmt.Sprintf("  %s %s %s: %s", mark, th.Agent(r.Agent), verdict, summary) +
			th.Paint(th.Dim, fmt.Sprintf(" (%s, %s tokens, %s)", Plural(r.Turns, "call"), HumanTokens(r.Usage.TotalTokens), Elapsed(r.Elapsed)))}
	case messages.GateDecided:
		d := ev.Decision
		if !d.ReviewRequired && !d.QARequired {
			return append(t.release(), "  "+th.Paint(th.Gate, "⚖")+" quality gates: not required (single low-risk change)")
		}
		// The gates may change the code; the answer written after them
		// is the answer, so this one is progress.
		out := t.interimLine()
		out = append(out, "  "+th.Paint(th.Gate, "⚖")+" quality gates: review and QA required")
		for _, why := range d.Reasons {
			out = append(out, th.Paint(th.Dim, "      - "+firstLine(why)))
		}
		return out
	case messages.GateStage:
		if !ev.Done {
			return nil
		}
		mark := th.Paint(th.OK, "passed")
		switch {
		case ev.Stage == "fix":
			mark = "applied"
		case !ev.Passed:
			mark = th.Paint(th.Err, "failed")
		}
		return []string{fmt.Sprintf("  %s %s (round %d): %s — %s", th.Paint(th.Gate, "⚖"), ev.Stage, StageRound(ev.GateStageResult), mark, firstLine(ev.Summary))}
	case messages.Retrying:
		return []string{th.Paint(th.Dim, fmt.Sprintf("  … %s: model call failed (%s); retry %d in %s", termsafe.Line(ev.Agent), firstLine(ev.Error), ev.Attempt, time.Duration(ev.WaitMS)*time.Millisecond))}
	case messages.RateLimited:
		return []string{th.Paint(th.Dim, fmt.Sprintf("  … %s: waiting for rate limit (%s), %s", termsafe.Line(ev.Agent), termsafe.Line(ev.Provider), time.Duration(ev.WaitMS)*time.Millisecond))}
	case messages.Notice:
		st := th.Warn
		if ev.Level == "info" {
			st = th.Dim
		}
		return []string{"  " + th.Paint(st, "! "+termsafe.Line(ev.Text))}
	case messages.SessionFenced:
		return []string{"  " + th.Paint(th.Warn, "! "+termsafe.Line(ev.Reason)+": open it again to take it back (odin --resume)")}
	case messages.Compacted:
		parts := ""
		if ev.Requests > 1 {
			parts = fmt.Sprintf(" (summarised in %d parts)", ev.Requests)
		}
		return []string{th.Paint(th.Dim, fmt.Sprintf("  ⇣ compacted %d messages: %s → %s tokens%s", ev.Messages, HumanTokens(ev.TokensBefore), HumanTokens(ev.TokensAfter), parts))}
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
		return []string{"  " + th.Paint(th.Warn, fmt.Sprintf("! the display fell behind: %d updates skipped; the rest of the answer follows when the turn ends", ev.Dropped))}
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
		label := llm.Image{Name: im.Name, MIME: im.MIME, Width: im.Width, Height: im.Height}.Label()
		out = append(out, "  "+th.Paint(th.Dim, termsafe.Line(label)))
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
	u := res.Usage
	if res.Elapsed == 0 && u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		// A result known only from the stored history (odin attach after
		// lost events): no figures to show rather than zeros.
		return out
	}
	out = append(out, th.Paint(th.Dim, fmt.Sprintf("  %s · %s in · %s out · %s", Elapsed(res.Elapsed), HumanTokens(u.PromptTokens), HumanTokens(u.CompletionTokens), CostText(u.Cost, u.CostUnknown))))
	return out
}

func gateLines(th *Theme, g *messages.GateReport) []string {
	d := g.Decision
	if !d.ReviewRequired && len(g.Stages) == 0 {
		return []string{"Quality gates: not required"}
	}
	verdict := th.Paint(th.OK, "PASSED")
	if !g.Passed {
		verdict = th.Paint(th.Err, "FAILED")
	}
	out := []string{fmt.Sprintf("Quality gates: %s after %s", verdict, Plural(g.FixRounds, "fix round"))}
	for _, why := range d.Reasons {
		out = append(out, "  required because: "+firstLine(why))
	}
	for _, s := range g.Stages {
		mark := "passed"
		switch {
		case s.Stage == "fix":
			mark = "applied"
		case !s.Passed:
			mark = "failed"
		}
		out = append(out, fmt.Sprintf("  %-6s round %d: %-7s %s", s.Stage, StageRound(s), mark, firstLine(s.Summary)))
	}
	if rv := g.Review; rv != nil {
		for _, is := range rv.Issues {
			loc := termsafe.Line(is.File)
			if is.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, is.Line)
			}
			out = append(out, fmt.Sprintf("    [%s] %s %s", termsafe.Line(is.Severity), loc, termsafe.Line(is.Message)))
		}
	}
	if q := g.QA; q != nil {
		for _, c := range q.Checks {
			mark := th.Paint(th.OK, "ok  ")
			if !c.Passed {
				mark = th.Paint(th.Err, "FAIL")
			}
			out = append(out, fmt.Sprintf("    %s %-6s %s", mark, termsafe.Line(c.Name), termsafe.Line(c.Command)))
		}
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
	out := []string{fmt.Sprintf("Usage over %s:", Plural(t.turns, "turn"))}
	for _, u := range rows {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		out = append(out, fmt.Sprintf("  %-13s %-18s %8s in %7s cached %7s out  %s%s", u.Agent, u.Model, HumanTokens(u.PromptTokens), HumanTokens(u.CachedTokens), HumanTokens(u.CompletionTokens), CostText(u.Cost, u.CostUnknown), est))
	}
	out = append(out, fmt.Sprintf("  %-13s %-18s %8s in %7s cached %7s out  %s", "total", "", HumanTokens(t.usage.PromptTokens), HumanTokens(t.usage.CachedTokens), HumanTokens(t.usage.CompletionTokens), CostText(t.usage.Cost, t.usage.CostUnknown)))
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
