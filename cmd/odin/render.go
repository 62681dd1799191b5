package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

// renderer prints a headless run: progress on stderr and the result on
// stdout (text), one JSON document at the end (json), or every event as a
// JSON line (stream-json).
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
}

func newRenderer(format string, quiet bool, root string, out, errw io.Writer) *renderer {
	return &renderer{format: format, quiet: quiet, root: root, out: out, errw: errw,
		color: colorEnabled(errw)}
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
	fmt.Fprintf(r.errw, format+"\n", args...)
}

func (r *renderer) notice(text string) {
	if r.format == "stream-json" {
		writeJSON(r.out, messages.Envelope{Time: time.Now(), Event: messages.Notice{Level: "info", Text: text}})
		return
	}
	fmt.Fprintln(r.errw, text)
}

func (r *renderer) event(env messages.Envelope) {
	if r.format == "stream-json" {
		writeJSON(r.out, env)
		return
	}
	switch ev := env.Event.(type) {
	case messages.TextDelta:
		if ev.TaskID == "" {
			r.said.WriteString(ev.Text)
		}
	case messages.TurnStarted:
		r.progress("%s %s", r.paint("1", "odin ▸"), firstLine(ev.Input.Body))
	case messages.AgentStarted:
		r.narrate()
		r.progress("  %s %s: %s %s", r.paint("36", "▸"), r.paint("1", ev.Agent), ev.Description,
			r.paint("2", fmt.Sprintf("(%s, deadline %s)", ev.Model, ev.Timeout)))
	case messages.ToolStarted:
		who := ev.Agent
		indent := "    "
		if ev.TaskID == "" {
			indent = "  "
			r.narrate()
		}
		r.progress("%s%s %s %s", indent, r.paint("2", "·"), r.paint("2", who), r.toolLabel(ev.Name, ev.Input))
	case messages.ToolFinished:
		if ev.Denied {
			r.progress("      %s %s", r.paint("33", "denied:"), firstLine(ev.Output))
		} else if ev.IsError {
			r.progress("      %s %s", r.paint("33", "error:"), firstLine(ev.Output))
		}
	case messages.AgentRestarted:
		r.progress("  %s %s crashed (%s); restart %d", r.paint("33", "↻"), ev.Agent, ev.Reason, ev.Restart)
	case messages.AgentFinished:
		rep := ev.Report
		mark := r.paint("32", "✓")
		if rep.Status != messages.ReportOK {
			mark = r.paint("31", "✗")
		}
		r.progress("  %s %s %s: %s %s", mark, r.paint("1", rep.Agent), rep.Status, firstLine(rep.Summary),
			r.paint("2", fmt.Sprintf("(%d calls, %s tokens, %s)", rep.Turns, term.HumanTokens(rep.Usage.TotalTokens), rep.Elapsed.Round(time.Millisecond))))
	case messages.GateDecided:
		r.narrate() // the answer before the gates is progress, not the answer
		d := ev.Decision
		if d.ReviewRequired {
			r.progress("  %s quality gates: review and QA required", r.paint("35", "⚖"))
			for _, why := range d.Reasons {
				r.progress("      - %s", why)
			}
		} else {
			r.progress("  %s quality gates: not required (single low-risk file)", r.paint("35", "⚖"))
		}
	case messages.GateStage:
		if !ev.Done && ev.Stage == "qa" {
			r.progress("  %s qa (round %d): running the project's checks…", r.paint("35", "⚖"), ev.Round)
		}
		if ev.Done {
			mark := r.paint("32", "passed")
			if !ev.Passed {
				mark = r.paint("31", "failed")
			}
			if ev.Stage == "fix" {
				mark = "done"
			}
			r.progress("  %s %s (round %d): %s — %s", r.paint("35", "⚖"), ev.Stage, ev.Round, mark, firstLine(ev.Summary))
		}
	case messages.Retrying:
		if ev.TaskID == "" {
			r.said.Reset()
		}
		r.progress("  %s %s: model call failed (%s); retry %d in %s", r.paint("33", "…"), ev.Agent, firstLine(ev.Error), ev.Attempt, time.Duration(ev.WaitMS)*time.Millisecond)
	case messages.Notice:
		r.progress("  %s %s", r.paint("33", "!"), ev.Text)
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
	case "stream-json":
		return // turn_finished already carried it
	case "json":
		writeJSON(r.out, jsonResult{SessionID: session, TurnResult: res, ElapsedMS: res.Elapsed.Milliseconds()})
		return
	}
	// After quality gates the answer was written from their outcome: it
	// follows the gate report; the interim text was progress (stderr).
	synthesized := res.Interim != ""
	if res.Answer != "" && !synthesized {
		fmt.Fprintln(r.out, strings.TrimRight(res.Answer, "\n"))
	}
	if res.PlanFile != "" {
		fmt.Fprintf(r.out, "\nPlan saved to %s\n", res.PlanFile)
	}
	if len(res.Files) > 0 {
		fmt.Fprintf(r.out, "\nFiles changed (%d):\n", len(res.Files))
		for _, f := range res.Files {
			fmt.Fprintf(r.out, "  %s\n", f)
		}
		if res.Diff != "" {
			level := term.ColorNone
			if colorEnabled(r.out) {
				level = term.DetectColor(os.LookupEnv)
			}
			fmt.Fprintf(r.out, "\n%s", term.ColorDiff(term.NewTheme(r.out, level), res.Diff))
		}
	}
	if g := res.Gates; g != nil {
		fmt.Fprintln(r.out)
		printGates(r.out, g)
	}
	if synthesized && res.Answer != "" {
		fmt.Fprintln(r.out)
		fmt.Fprintln(r.out, strings.TrimRight(res.Answer, "\n"))
	}
	if len(res.ByAgent) > 0 {
		fmt.Fprintln(r.out)
		printUsage(r.out, res)
	}
	if res.Status != messages.TurnDone && res.Error != "" && r.quiet {
		fmt.Fprintln(r.errw, res.Error)
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
	fmt.Fprintf(w, "Quality gates: %s after %d fix round(s)\n", verdict, g.FixRounds)
	for _, why := range d.Reasons {
		fmt.Fprintf(w, "  required because: %s\n", why)
	}
	for _, s := range g.Stages {
		mark := "passed"
		if !s.Passed {
			mark = "failed"
		}
		if s.Stage == "fix" {
			mark = "applied"
		}
		fmt.Fprintf(w, "  %-6s round %d: %-7s %s\n", s.Stage, s.Round, mark, firstLine(s.Summary))
	}
	if rv := g.Review; rv != nil && len(rv.Issues) > 0 {
		fmt.Fprintf(w, "  review findings (last round, score %d/10):\n", rv.OverallScore)
		for _, is := range rv.Issues {
			loc := is.File
			if is.Line > 0 {
				loc = fmt.Sprintf("%s:%d", is.File, is.Line)
			}
			fmt.Fprintf(w, "    [%s] %s %s\n", is.Severity, loc, is.Message)
		}
	}
	if q := g.QA; q != nil {
		fmt.Fprintln(w, "  QA checks:")
		for _, c := range q.Checks {
			mark := "ok  "
			if !c.Passed {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "    %s %-6s %s\n", mark, c.Name, c.Command)
		}
		for _, wn := range q.Warnings {
			fmt.Fprintf(w, "    warning: %s\n", wn)
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
		fmt.Fprintf(w, "  %-13s %-18s %8s in %7s out  $%.4f%s\n", u.Agent, u.Model, term.HumanTokens(u.PromptTokens), term.HumanTokens(u.CompletionTokens), u.Cost, est)
	}
	fmt.Fprintf(w, "  %-13s %-18s %8s in %7s out  $%.4f   %s\n", "total", "", term.HumanTokens(res.Usage.PromptTokens), term.HumanTokens(res.Usage.CompletionTokens), res.Usage.Cost, res.Elapsed.Round(time.Millisecond))
}

// toolLabel is a short description of a tool call for progress lines,
// with paths relative to the project.
func (r *renderer) toolLabel(name, input string) string {
	label := term.ToolLabel(name, input)
	label = strings.Replace(label, " "+r.root+string(filepath.Separator), " ", 1)
	if strings.HasSuffix(label, " "+r.root) {
		label = strings.TrimSuffix(label, r.root) + "."
	}
	return label
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 160 {
		line = line[:160] + "…"
	}
	return line
}
