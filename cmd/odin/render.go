package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	xterm "github.com/charmbracelet/x/term"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// renderer prints a headless run: progress on stderr and the result on
// stdout (text), one JSON document at the end (json, Claude Code's result
// with Odin's turn result), Claude Code's stream (stream-json, see
// claudeStream), or every one of Odin's events as a JSON line
// (odin-stream, docs/stream-json.md). In text output everything that comes from a
// model, a tool, a file or the repository is sanitized (termsafe) before
// Odin styles it, and each progress line passes a last guard
// (termsafe.Styled, or termsafe.Text when Odin paints nothing), so the
// terminal receives Odin's colours and no other control sequence. JSON
// output keeps the text as data, its controls escaped (termsafe.JSON).
type renderer struct {
	format string
	quiet  bool
	root   string
	out    io.Writer
	errw   io.Writer
	color  bool
	// said collects the Orchestrator's text of the current model call: it
	// is shown as narration when the call turns out to use tools, and
	// dropped when it is the final answer (printed at the end).
	said strings.Builder
	// modelCalls counts the Orchestrator's model calls (num_turns).
	modelCalls int
	// claude maps the events to Claude Code's shapes (json, stream-json).
	claude *claudeStream
}

func newRenderer(format string, quiet bool, root string, out, errw io.Writer) *renderer {
	r := &renderer{format: format, quiet: quiet, root: root, out: out, errw: errw,
		color: colorEnabled(errw)}
	switch format {
	case "stream-json":
		r.claude = newClaudeStream(out)
	case "json":
		r.claude = newClaudeStream(io.Discard) // only its result is printed
	}
	return r
}

// colorEnabled honours NO_COLOR and only colours terminals.
func colorEnabled(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (r *renderer) paint(code, s string) string {
	if !r.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (r *renderer) progress(format string, args ...any) {
	if r.format != "text" || r.quiet {
		return
	}
	line := fmt.Sprintf(format, args...)
	// The last guard: only Odin's own SGR may pass, and none when it
	// paints nothing.
	if r.color {
		line = termsafe.Styled(line)
	} else {
		line = termsafe.Text(line)
	}
	fmt.Fprintln(r.errw, line)
}

func (r *renderer) notice(text string) {
	if r.format == "odin-stream" {
		writeJSON(r.out, messages.Envelope{Time: time.Now(), Event: messages.Notice{Level: "info", Text: text}})
		return
	}
	fmt.Fprintln(r.errw, termsafe.Text(text))
}

// width is stderr's width when it is a terminal, else 100 columns so that
// logs stay readable.
func (r *renderer) width() int {
	if f, ok := r.errw.(*os.File); ok {
		if w, _, err := xterm.GetSize(f.Fd()); err == nil && w > 40 {
			return w - 1
		}
	}
	return 100
}

func (r *renderer) event(env messages.Envelope) {
	switch {
	case r.format == "odin-stream":
		writeJSON(r.out, env)
		return
	case r.claude != nil:
		r.claude.event(env)
		return
	}
	if u, ok := env.Event.(messages.UsageUpdated); ok && u.TaskID == "" {
		r.modelCalls++
	}
	switch ev := env.Event.(type) {
	case messages.TextDelta:
		if ev.TaskID == "" {
			r.said.WriteString(ev.Text)
		}
		return
	case messages.AgentStarted, messages.GateDecided:
		r.narrate() // the answer before the gates is progress, not the answer
	case messages.ToolStarted:
		if ev.TaskID == "" {
			r.narrate()
		}
	case messages.ToolFinished:
		if !ev.Denied && !ev.IsError {
			return
		}
	case messages.BudgetExceeded:
		if ev.Agent == "" {
			return // the turn's own: its result says why it stopped
		}
	case messages.GateStage:
		// The start of a stage run by a specialist shows as the
		// specialist's line; QA's checks are Odin's own, so they get one.
		if !ev.Done && ev.Stage != "qa" {
			return
		}
	case messages.Retrying:
		if ev.TaskID == "" {
			r.said.Reset()
		}
	case messages.Resync:
		// The output fell behind and progress was skipped; the result
		// still comes whole with turn_finished.
		r.said.Reset()
	case messages.TurnFinished:
		return // final prints the result
	}
	r.line(present.DescribeIn(r.root, env.Event))
}

// line prints an event's line: indented, painted, its whole text wrapped
// under it, its items one level deeper.
func (r *renderer) line(l present.Line) {
	if r.format != "text" || r.quiet || l.Silent() {
		return
	}
	head := l.Indent() + l.Styled(r.paintTone)
	if l.Whole != "" {
		w := ansi.StringWidth(l.Indent()+l.Text()) - ansi.StringWidth(l.Whole)
		wrapped := term.WrapWords(l.Whole, max(r.width()-w, 20))
		r.progress("%s %s", head, wrapped[0])
		hang := strings.Repeat(" ", w)
		for _, more := range wrapped[1:] {
			r.progress("%s%s", hang, more)
		}
	} else {
		r.progress("%s", head)
	}
	for _, it := range l.Items {
		r.progress("%s    %s", l.Indent(), r.paint("2", it))
	}
}

// paintTone is the ANSI colour of a presentation tone.
func (r *renderer) paintTone(tone present.Tone, s string) string {
	code := map[present.Tone]string{present.Dim: "2", present.Bold: "1", present.Agent: "1", present.Accent: "36",
		present.OK: "32", present.Warn: "33", present.Err: "31", present.Gate: "35"}[tone]
	if code == "" {
		return s
	}
	return r.paint(code, s)
}

// narrate prints what the Orchestrator said before using tools.
func (r *renderer) narrate() {
	if text := strings.TrimSpace(r.said.String()); text != "" {
		r.progress("  %s %s", r.paint("34", "odin:"), firstLine(text))
	}
	r.said.Reset()
}

// resumedFinal shows, as progress, the answer of a turn resumed before
// this run's task: stdout stays this task's answer, and the resumed
// turn's text must not be narrated as this task's.
func (r *renderer) resumedFinal(res messages.TurnResult) {
	r.said.Reset()
	answer := strings.TrimSpace(res.Answer)
	if r.format != "text" || r.quiet || answer == "" {
		return
	}
	r.progress("%s", r.paint("2", "the resumed turn answered:"))
	for _, l := range strings.Split(termsafe.Text(answer), "\n") {
		r.progress("  %s", l)
	}
}

// final prints the turn's result.
func (r *renderer) final(res messages.TurnResult, session string) {
	switch r.format {
	case "odin-stream":
		return // turn_finished already carried it
	case "stream-json":
		r.claude.finish(res, session)
		return
	case "json":
		writeJSON(r.out, r.claude.result(res, session))
		return
	}
	if r.quiet {
		r.finalQuiet(res)
		return
	}
	// After quality gates the answer was written from their outcome: it
	// follows the gate report; the interim text was progress (stderr).
	synthesized := res.Interim != ""
	if res.Answer != "" && !synthesized {
		fmt.Fprintln(r.out, termsafe.Text(strings.TrimRight(res.Answer, "\n")))
	}
	if res.PlanFile != "" {
		fmt.Fprintf(r.out, "\nPlan saved to %s\n", termsafe.Line(res.PlanFile))
	}
	if len(res.Files) > 0 {
		fmt.Fprintf(r.out, "\nFiles changed (%d):\n", len(res.Files))
		for _, f := range res.Files {
			fmt.Fprintf(r.out, "  %s\n", termsafe.Line(f))
		}
		if res.Diff != "" {
			level := term.ColorNone
			if colorEnabled(r.out) {
				level = term.DetectColor(os.LookupEnv)
			}
			fmt.Fprintf(r.out, "\n%s", termsafe.Styled(term.ColorDiff(term.NewTheme(r.out, level), termsafe.Text(res.Diff))))
		}
	}
	if g := res.Gates; g != nil {
		fmt.Fprintln(r.out)
		printGates(r.out, g)
	}
	if synthesized && res.Answer != "" {
		fmt.Fprintln(r.out)
		fmt.Fprintln(r.out, termsafe.Text(strings.TrimRight(res.Answer, "\n")))
	}
	if len(res.ByAgent) > 0 {
		fmt.Fprintln(r.out)
		printUsage(r.out, res)
	}
	if res.Status != messages.TurnDone && res.Error != "" && r.quiet {
		fmt.Fprintln(r.errw, termsafe.Text(res.Error))
	}
}

// printGates prints the gate report, unstyled: it goes to stdout, which
// scripts read.
func printGates(w io.Writer, g *messages.GateReport) {
	for _, l := range present.GateReport(g) {
		fmt.Fprintln(w, l.Indent()+l.Text())
	}
}

func printUsage(w io.Writer, res messages.TurnResult) {
	rows := append([]messages.AgentUsage(nil), res.ByAgent...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Agent == "orchestrator" && rows[j].Agent != "orchestrator" })
	fmt.Fprintln(w, "Usage:")
	for _, u := range rows {
		est := ""
		if u.Estimated {
			est = " (estimated)"
		}
		fmt.Fprintf(w, "  %-13s %-18s %8s in %7s cached %7s out  %s%s\n", termsafe.Line(u.Agent), termsafe.Line(u.Model), present.Tokens(u.PromptTokens), present.Tokens(u.CachedTokens), present.Tokens(u.CompletionTokens), present.UsageCost(u.Usage), est)
	}
	fmt.Fprintf(w, "  %-13s %-18s %8s in %7s cached %7s out  %s   %s\n", "total", "", present.Tokens(res.Usage.PromptTokens), present.Tokens(res.Usage.CachedTokens), present.Tokens(res.Usage.CompletionTokens), present.UsageCost(res.Usage), present.Duration(res.Elapsed))
}

// firstLine is the sanitized first line of s, cut to 160 columns on a
// character boundary for progress lines. Denials are never cut: see
// renderer.denial.
func firstLine(s string) string {
	s = strings.TrimSpace(termsafe.Text(s))
	line, _, _ := strings.Cut(s, "\n")
	return ansi.Truncate(termsafe.Line(line), 160, "…")
}

// errorText is how a command's error is printed: one line, except the
// no-provider error, whose remedies (three ways to configure a model) read
// better as a list than as one long line.
func errorText(err error) string {
	msg := termsafe.Text(err.Error())
	if !errors.Is(err, config.ErrNoProvider) {
		var ee *exitError
		if errors.As(err, &ee) && ee.cmd != "" {
			return termsafe.Line(ee.cmd) + ": " + msg
		}
		return "odin: " + msg
	}
	head := strings.TrimSuffix(strings.TrimSuffix(msg, config.ErrNoProvider.Error()), ": ")
	what, fixes, ok := strings.Cut(config.ErrNoProvider.Error(), ": ")
	if !ok {
		return "odin: " + msg
	}
	var b strings.Builder
	if head != "" && head != msg {
		b.WriteString("odin: " + head + ".\n")
	}
	b.WriteString(strings.ToUpper(what[:1]) + what[1:] + ". Either:")
	for i, fix := range strings.Split(fixes, ", or ") {
		if i > 0 {
			fix = "or " + fix
		}
		b.WriteString("\n  - " + fix)
	}
	return b.String()
}
