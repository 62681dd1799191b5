package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	xterm "github.com/charmbracelet/x/term"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/llm"
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

// denial prints a refusal whole, wrapped under its label: its second half
// says how to allow the call, so cutting it would lose the useful part.
func (r *renderer) denial(label, text string) {
	if r.format != "text" || r.quiet {
		return
	}
	head := "      " + label + " "
	hang := strings.Repeat(" ", len(head))
	lines := term.WrapWords(termsafe.Text(text), max(r.width()-len(head), 20))
	for i, l := range lines {
		if i == 0 {
			r.progress("      %s %s", r.paint("33", label), l)
			continue
		}
		r.progress("%s%s", hang, l)
	}
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
	case messages.TurnStarted:
		r.progress("%s %s", r.paint("1", "odin ▸"), firstLine(ev.Input.Body))
		for _, im := range ev.Input.Images {
			r.progress("  %s", termsafe.Line(llm.Image{Name: im.Name, MIME: im.MIME, Width: im.Width, Height: im.Height}.Label()))
		}
	case messages.AgentStarted:
		r.narrate()
		r.progress("  %s %s: %s %s", r.paint("36", "▸"), r.paint("1", termsafe.Line(ev.Agent)), firstLine(ev.Description),
			r.paint("2", fmt.Sprintf("(%s, deadline %s)", termsafe.Line(ev.Model), ev.Timeout)))
	case messages.ToolStarted:
		who := ev.Agent
		indent := "    "
		if ev.TaskID == "" {
			indent = "  "
			r.narrate()
		}
		r.progress("%s%s %s %s", indent, r.paint("2", "·"), r.paint("2", termsafe.Line(who)), r.toolLabel(ev.Name, ev.Input))
	case messages.ToolFinished:
		if ev.Denied {
			r.denial("denied:", ev.Output)
		} else if ev.IsError {
			r.progress("      %s %s", r.paint("33", "error:"), firstLine(ev.Output))
		}
	case messages.BudgetExceeded:
		if ev.Agent != "" {
			r.progress("  %s %s stopped: %s", r.paint("31", "■"), termsafe.Line(ev.Agent), termsafe.Line(ev.Text()))
		}
	case messages.NoProgress:
		r.progress("  %s %s: %s", r.paint("33", "‖"), termsafe.Line(ev.Agent), termsafe.Line(ev.Text()))
	case messages.AgentRestarted:
		r.progress("  %s %s crashed (%s); restart %d", r.paint("33", "↻"), termsafe.Line(ev.Agent), firstLine(ev.Reason), ev.Restart)
	case messages.AgentFinished:
		rep := ev.Report
		ok, verdict := term.Verdict(rep)
		mark := r.paint("32", "✓")
		if !ok {
			mark = r.paint("31", "✗")
		}
		r.progress("  %s %s %s: %s %s", mark, r.paint("1", termsafe.Line(rep.Agent)), verdict, firstLine(rep.Summary),
			r.paint("2", fmt.Sprintf("(%s, %s tokens, %s)", term.Plural(rep.Turns, "call"), term.HumanTokens(rep.Usage.TotalTokens), rep.Elapsed.Round(time.Millisecond))))
		for _, l := range lintLines(rep) {
			r.progress("      %s %s", r.paint("2", "lint:"), l)
		}
	case messages.GateDecided:
		r.narrate() // the answer before the gates is progress, not the answer
		d := ev.Decision
		if d.ReviewRequired {
			r.progress("  %s quality gates: review and QA required", r.paint("35", "⚖"))
			for _, why := range d.Reasons {
				r.progress("      - %s", firstLine(why))
			}
		} else {
			r.progress("  %s quality gates: not required (single low-risk file)", r.paint("35", "⚖"))
		}
	case messages.GateStage:
		if !ev.Done && ev.Stage == "qa" {
			r.progress("  %s qa (round %d): running the project's checks…", r.paint("35", "⚖"), term.StageRound(ev.GateStageResult))
		}
		if ev.Done {
			mark := r.paint("32", "passed")
			if !ev.Passed {
				mark = r.paint("31", "failed")
			}
			if ev.Stage == "fix" {
				mark = "done"
			}
			r.progress("  %s %s (round %d): %s — %s", r.paint("35", "⚖"), ev.Stage, term.StageRound(ev.GateStageResult), mark, firstLine(ev.Summary))
		}
	case messages.Retrying:
		if ev.TaskID == "" {
			r.said.Reset()
		}
		r.progress("  %s %s: model call failed (%s); retry %d in %s", r.paint("33", "…"), termsafe.Line(ev.Agent), firstLine(ev.Error), ev.Attempt, time.Duration(ev.WaitMS)*time.Millisecond)
	case messages.RateLimited:
		r.progress("  %s %s: waiting for rate limit (%s), %s", r.paint("33", "…"), termsafe.Line(ev.Agent), termsafe.Line(ev.Provider), time.Duration(ev.WaitMS)*time.Millisecond)
	case messages.Notice:
		r.progress("  %s %s", r.paint("33", "!"), termsafe.Text(ev.Text))
	case messages.SessionFenced:
		r.progress("  %s %s", r.paint("31", "!"), termsafe.Line(ev.Reason))
	case messages.Resync:
		// The output fell behind and progress was skipped; the result
		// still comes whole with turn_finished.
		r.said.Reset()
		r.progress("  %s output fell behind: %d progress events skipped (odin sessions show has the full transcript)", r.paint("33", "!"), ev.Dropped)
	}
}

// narrate prints what the Orchestrator said before using tools.
func (r *renderer) narrate() {
	if text := strings.TrimSpace(r.said.String()); text != "" {
		r.progress("  %s %s", r.paint("34", "odin:"), firstLine(text))
	}
	r.said.Reset()
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

func printGates(w io.Writer, g *messages.GateReport) {
	d := g.Decision
	verdict := "PASSED"
	if !g.Passed {
		verdict = "FAILED"
	}
	if !d.ReviewRequired && len(g.Stages) == 0 {
		fmt.Fprintf(w, "Quality gates: not required (%d file, no risk path, no public API change)\n", len(d.Files))
		return
	}
	fmt.Fprintf(w, "Quality gates: %s after %s\n", verdict, term.Plural(g.FixRounds, "fix round"))
	for _, why := range d.Reasons {
		fmt.Fprintf(w, "  required because: %s\n", firstLine(why))
	}
	for _, s := range g.Stages {
		mark := "passed"
		if !s.Passed {
			mark = "failed"
		}
		if s.Stage == "fix" {
			mark = "applied"
		}
		fmt.Fprintf(w, "  %-6s round %d: %-7s %s\n", s.Stage, term.StageRound(s), mark, firstLine(s.Summary))
	}
	if rv := g.Review; rv != nil && len(rv.Issues) > 0 {
		fmt.Fprintf(w, "  review findings (last round, score %d/10):\n", rv.OverallScore)
		for _, is := range rv.Issues {
			loc := termsafe.Line(is.File)
			if is.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, is.Line)
			}
			fmt.Fprintf(w, "    [%s] %s %s\n", termsafe.Line(is.Severity), loc, termsafe.Line(is.Message))
		}
	}
	if q := g.QA; q != nil {
		fmt.Fprintln(w, "  QA checks:")
		for _, c := range q.Checks {
			mark := "ok  "
			if !c.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "    %s %-6s %s\n", mark, termsafe.Line(c.Name), termsafe.Line(c.Command))
		}
		printAcceptance(w, q)
		for _, wn := range q.Warnings {
			fmt.Fprintf(w, "    warning: %s\n", termsafe.Line(wn))
		}
	}
}

// printAcceptance lists QA's acceptance criteria, met and unmet, and the
// coverage of the changed packages before and after.
func printAcceptance(w io.Writer, q *messages.QAResult) {
	if len(q.Criteria) > 0 {
		fmt.Fprintln(w, "  acceptance criteria:")
		for _, c := range q.Criteria {
			mark := "met  "
			if !c.Met {
				mark = "UNMET"
			}
			fmt.Fprintf(w, "    %s %s — %s (by %s)\n", mark, termsafe.Line(c.Criterion), termsafe.Line(firstLine(c.Evidence)), c.By)
		}
	}
	if cov := q.Coverage; cov != nil && len(cov.Packages) > 0 {
		fmt.Fprintf(w, "  coverage (%s):\n", termsafe.Line(cov.Command))
		pct := func(v *float64) string {
			if v == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.1f%%", *v)
		}
		for _, p := range cov.Packages {
			fmt.Fprintf(w, "    %s: %s → %s\n", termsafe.Line(p.Package), pct(p.Before), pct(p.After))
		}
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
		fmt.Fprintf(w, "  %-13s %-18s %8s in %7s cached %7s out  %s%s\n", termsafe.Line(u.Agent), termsafe.Line(u.Model), term.HumanTokens(u.PromptTokens), term.HumanTokens(u.CachedTokens), term.HumanTokens(u.CompletionTokens), usageCost(u.Usage), est)
	}
	fmt.Fprintf(w, "  %-13s %-18s %8s in %7s cached %7s out  %s   %s\n", "total", "", term.HumanTokens(res.Usage.PromptTokens), term.HumanTokens(res.Usage.CachedTokens), term.HumanTokens(res.Usage.CompletionTokens), usageCost(res.Usage), res.Elapsed.Round(time.Millisecond))
}

// toolLabel is a short description of a tool call for progress lines,
// with paths relative to the project.
func (r *renderer) toolLabel(name, input string) string {
	label := term.ToolLabel(name, input) // sanitized
	label = strings.Replace(label, " "+r.root+string(filepath.Separator), " ", 1)
	if strings.HasSuffix(label, " "+r.root) {
		label = strings.TrimSuffix(label, r.root) + "."
	}
	return label
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

// lintLines describes the formatter and linter runs of a Code report, one
// line each: the command and how it ended.
func lintLines(rep messages.Report) []string {
	var cr messages.CodeResult
	if rep.Result == nil || json.Unmarshal(rep.Result, &cr) != nil || cr.Lint == nil {
		return nil
	}
	var out []string
	for _, run := range cr.Lint.Runs {
		status := "ok"
		switch {
		case run.Missing:
			status = "not installed"
		case run.ExitCode != 0:
			status = fmt.Sprintf("exit %d: %s", run.ExitCode, firstLine(run.Output))
		}
		if len(run.Fixed) > 0 {
			status += ", fixed " + strings.Join(run.Fixed, ", ")
		}
		out = append(out, termsafe.Line(fmt.Sprintf("%s `%s` — %s", run.Kind, run.Command, status)))
	}
	if cr.Lint.Note != "" {
		out = append(out, termsafe.Line(cr.Lint.Note))
	}
	return out
}
