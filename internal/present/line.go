package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// Tone is the role of a span, which each front end maps to its own style:
// an ANSI colour, nothing in plain text, a CSS class in the viewer.
type Tone string

// Tones.
const (
	Plain  Tone = ""
	Dim    Tone = "dim"
	Bold   Tone = "bold"
	Accent Tone = "accent"
	OK     Tone = "ok"
	Warn   Tone = "warn"
	Err    Tone = "err"
	Gate   Tone = "gate"
	// Agent is an agent's name; the terminal gives each agent its colour.
	Agent Tone = "agent"
)

// Span is a run of text in one tone.
type Span struct {
	Text string `json:"text"`
	Tone Tone   `json:"tone,omitempty"`
}

// Line is one event as users read it. A front end prints Depth levels of
// indentation (two columns each), then the spans, then Whole wrapped to
// its width (never cut), then each of Items on a line of its own one
// level deeper. The zero Line (no spans) prints nothing: the event is
// state for a status area, not a line (text deltas, usage, todos).
type Line struct {
	// Kind is the event's type ("gate_stage"); a tool's result is
	// "tool_denied" or "tool_error".
	Kind string `json:"kind"`
	// Depth is 1 for the Orchestrator's lines and 2 for what happens
	// inside a specialist's run or under a tool call.
	Depth int    `json:"depth"`
	Spans []Span `json:"spans,omitempty"`
	// Whole is text that must be read in full (a denial says how to
	// allow the call in its second half): wrapped, never cut.
	Whole string   `json:"whole,omitempty"`
	Items []string `json:"items,omitempty"`
	// TaskID is the specialist task the line is about, empty for the
	// Orchestrator's own.
	TaskID string `json:"task_id,omitempty"`
	// Round is a gate stage's round (Round), Cost a cost as Cost shows
	// it: the numbers tests and the viewer read without parsing words.
	Round int    `json:"round,omitempty"`
	Cost  string `json:"cost,omitempty"`
}

// Text is the line's words without styling or indentation: its spans,
// then Whole after a space.
func (l Line) Text() string {
	var b strings.Builder
	for _, s := range l.Spans {
		b.WriteString(s.Text)
	}
	if l.Whole != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.Whole)
	}
	return b.String()
}

// Silent reports whether the line prints nothing.
func (l Line) Silent() bool { return len(l.Spans) == 0 && l.Whole == "" }

// Marks: the glyph at the head of each kind of line.
const (
	MarkTurn    = "odin ▸"
	MarkAgent   = "▸"
	MarkTool    = "⏺"
	MarkResult  = "⎿"
	MarkOK      = "✓"
	MarkFailed  = "✗"
	MarkGate    = "⚖"
	MarkWait    = "…"
	MarkNotice  = "!"
	MarkRestart = "↻"
	MarkPaused  = "‖"
	MarkStopped = "■"
	MarkCompact = "⇣"
)

// b builds a line's spans.
type b []Span

func (s b) add(tone Tone, text string) b { return append(s, Span{Text: text, Tone: tone}) }
func (s b) plain(text string) b          { return s.add(Plain, text) }

// who is an event's agent for a line: the specialist's name, sanitized.
func who(agent string) string { return termsafe.Line(agent) }

// depth is 1 for the Orchestrator's events, 2 for a specialist's.
func depth(taskID string) int {
	if taskID == "" {
		return 1
	}
	return 2
}

// Describe is the line ev prints. Every event kind has a case; the kinds
// that are state for a status area (streamed text, usage, todos, agent
// progress, queue changes, init) describe to a silent line of their kind.
func Describe(ev messages.Event) Line { return DescribeIn("", ev) }

// DescribeIn is Describe for a session of the workspace root: a tool
// call's paths inside it are shown relative to it (ToolLabelIn).
func DescribeIn(root string, ev messages.Event) Line {
	l := Line{Kind: ev.EventType(), Depth: 1}
	switch ev := ev.(type) {
	case messages.TurnStarted:
		l.Depth = 0
		l.Spans = b{}.add(Bold, MarkTurn).plain(" " + FirstLine(ev.Input.Body))
		for _, im := range ev.Input.Images {
			l.Items = append(l.Items, ImageLabel(im))
		}
	case messages.ToolStarted:
		l.Depth, l.TaskID = depth(ev.TaskID), ev.TaskID
		s := b{}.add(Dim, MarkTool).plain(" ")
		if ev.TaskID != "" {
			s = s.add(Dim, who(ev.Agent)).plain(" ")
		}
		l.Spans = s.plain(ToolLabelIn(root, ev.Name, ev.Input))
	case messages.ToolFinished:
		// Under the call it ends, a specialist's as the Orchestrator's.
		l.TaskID, l.Depth = ev.TaskID, 2
		head := MarkResult + " "
		if ev.TaskID != "" {
			head += who(ev.Agent) + " "
		}
		switch {
		case ev.Denied:
			l.Kind = "tool_denied"
			l.Spans = b{}.add(Warn, head+"denied:")
			l.Whole = strings.Join(strings.Fields(termsafe.Text(ev.Output)), " ")
		case ev.IsError:
			l.Kind = "tool_error"
			l.Spans = b{}.add(Warn, head+"error:").plain(" " + FirstLine(ev.Output))
		}
	case messages.AgentStarted:
		l.TaskID = ev.TaskID
		l.Spans = b{}.add(Accent, MarkAgent).plain(" ").add(Agent, who(ev.Agent)).plain(" "+FirstLine(ev.Description)).
			add(Dim, fmt.Sprintf(" (%s, deadline %s)", termsafe.Line(ev.Model), Wait(ev.Timeout)))
	case messages.AgentFinished:
		r := ev.Report
		l.TaskID = r.TaskID
		ok, verdict := Verdict(r)
		mark, tone := MarkOK, OK
		if !ok {
			mark, tone = MarkFailed, Err
		}
		summary := FirstLine(r.Summary)
		if r.Status != messages.ReportOK && r.Error != "" {
			summary = FirstLine(r.Error)
		}
		l.Cost = UsageCost(r.Usage)
		l.Spans = b{}.add(tone, mark).plain(" ").add(Agent, who(r.Agent)).plain(" "+verdict+": "+summary).
			add(Dim, fmt.Sprintf(" (%s, %s tokens, %s)", Plural(r.Turns, "call"), Tokens(r.Usage.TotalTokens), Duration(r.Elapsed)))
		l.Items = LintLines(r)
	case messages.AgentRestarted:
		l.TaskID = ev.TaskID
		l.Spans = b{}.add(Warn, MarkRestart).plain(fmt.Sprintf(" %s crashed (%s); restart %d", who(ev.Agent), FirstLine(ev.Reason), ev.Restart))
	case messages.BudgetExceeded:
		l.TaskID = ev.TaskID
		name := "turn"
		if ev.Agent != "" {
			name = who(ev.Agent)
		}
		l.Spans = b{}.add(Err, MarkStopped).plain(fmt.Sprintf(" %s stopped: %s", name, termsafe.Line(ev.Text())))
	case messages.NoProgress:
		l.TaskID = ev.TaskID
		l.Spans = b{}.add(Warn, MarkPaused).plain(fmt.Sprintf(" %s paused: %s", who(ev.Agent), termsafe.Line(ev.Text())))
	case messages.GateDecided:
		d := ev.Decision
		if !d.ReviewRequired && !d.QARequired {
			l.Spans = b{}.add(Gate, MarkGate).plain(" quality gates: not required (single low-risk change)")
			break
		}
		l.Spans = b{}.add(Gate, MarkGate).plain(" quality gates: " + Required(d) + " required")
		for _, why := range d.Reasons {
			l.Items = append(l.Items, "- "+FirstLine(why))
		}
	case messages.GateStage:
		l.TaskID, l.Round = ev.TaskID, Round(ev.GateStageResult)
		head := b{}.add(Gate, MarkGate).plain(" " + StageRound(ev.Stage, l.Round, ev.MaxRounds) + ": ")
		if !ev.Done {
			what := "running"
			if ev.Stage == "qa" {
				what = "running the project's checks"
			}
			l.Spans = head.add(Dim, what+"…")
			break
		}
		tone := OK
		switch {
		case ev.Stage == "fix":
			tone = Plain
		case !ev.Passed:
			tone = Err
		}
		head = head.add(tone, ev.GateStageResult.Mark())
		if s := FirstLine(ev.Summary); s != "" {
			head = head.plain(" — " + s)
		}
		l.Spans = head
	case messages.Retrying:
		l.TaskID = ev.TaskID
		l.Spans = b{}.add(Dim, fmt.Sprintf("%s %s: model call failed (%s); retry %d in %s", MarkWait, who(ev.Agent), FirstLine(ev.Error), ev.Attempt, WaitMS(ev.WaitMS)))
	case messages.RateLimited:
		l.TaskID = ev.TaskID
		l.Spans = b{}.add(Dim, fmt.Sprintf("%s %s: waiting for rate limit (%s), %s", MarkWait, who(ev.Agent), termsafe.Line(ev.Provider), WaitMS(ev.WaitMS)))
	case messages.Notice:
		tone := Warn
		if ev.Level == "info" {
			tone = Dim
		}
		lines := strings.Split(strings.TrimSpace(termsafe.Text(ev.Text)), "\n")
		l.Spans = b{}.add(tone, MarkNotice+" "+termsafe.Line(lines[0]))
		for _, more := range lines[1:] {
			l.Items = append(l.Items, termsafe.Line(more))
		}
	case messages.SessionFenced:
		l.Spans = b{}.add(Warn, MarkNotice+" "+termsafe.Line(ev.Reason)+": open it again to take it back (odin --resume)")
	case messages.Compacted:
		parts := ""
		if ev.Requests > 1 {
			parts = fmt.Sprintf(" (summarised in %d parts)", ev.Requests)
		}
		l.Spans = b{}.add(Dim, fmt.Sprintf("%s compacted %s: %s → %s tokens%s", MarkCompact, Plural(ev.Messages, "message"), Tokens(ev.TokensBefore), Tokens(ev.TokensAfter), parts))
	case messages.Resync:
		l.Spans = b{}.add(Warn, fmt.Sprintf("%s the display fell behind: %s skipped; the rest of the answer follows when the turn ends", MarkNotice, Plural(ev.Dropped, "update")))
	case messages.ApprovalRequested:
		l.TaskID = ev.TaskID
		name := "orchestrator"
		if ev.Agent != "" {
			name = who(ev.Agent)
		}
		l.Spans = b{}.add(Warn, MarkNotice).plain(fmt.Sprintf(" %s asks to run %s %s", name, termsafe.Line(ev.Tool), FirstLine(ev.Subject)))
	case messages.ElicitationRequested:
		l.Spans = b{}.add(Warn, MarkNotice).plain(fmt.Sprintf(" MCP server %s asks for input (%s)", termsafe.Line(ev.Server), FirstLine(ev.Message)))
	case messages.TurnFinished:
		u := ev.Result.Usage
		l.Cost = UsageCost(u)
		if ev.Result.Elapsed == 0 && u.TotalTokens == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
			// A result known only from the stored history (odin attach
			// after lost events): no figures rather than zeros.
			break
		}
		l.Spans = b{}.add(Dim, TurnTotals(ev.Result))
	case messages.UsageUpdated:
		l.TaskID, l.Cost = ev.TaskID, UsageCost(ev.Usage)
	}
	return l
}

// TurnTotals is the line under a turn's result: "4s · 1.2k in · 300 out ·
// $0.0123".
func TurnTotals(res messages.TurnResult) string {
	u := res.Usage
	return fmt.Sprintf("%s · %s in · %s out · %s", Duration(res.Elapsed), Tokens(u.PromptTokens), Tokens(u.CompletionTokens), UsageCost(u))
}

// Required names the gates a decision requires: "review and QA",
// "review", "QA".
func Required(d messages.GateDecision) string {
	switch {
	case d.ReviewRequired && d.QARequired:
		return "review and QA"
	case d.ReviewRequired:
		return "review"
	case d.QARequired:
		return "QA"
	}
	return "nothing"
}

// WaitMS is Wait of a count of milliseconds.
func WaitMS(ms int64) string { return Wait(time.Duration(ms) * time.Millisecond) }

// ImageLabel is an attached image as a line shows it: "[image: a.png 4x3]".
func ImageLabel(im messages.Image) string {
	return termsafe.Line(llm.Image{Name: im.Name, MIME: im.MIME, Width: im.Width, Height: im.Height}.Label())
}

// Styled is the line's spans, each styled by paint (a front end's style
// for a tone), without indentation or Whole.
func (l Line) Styled(paint func(Tone, string) string) string {
	var b strings.Builder
	for _, s := range l.Spans {
		b.WriteString(paint(s.Tone, s.Text))
	}
	return b.String()
}

// Indent is the line's indentation: two columns per level of depth.
func (l Line) Indent() string { return strings.Repeat("  ", l.Depth) }
