package present

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// GateReport is a turn's gate report as it follows the turn's result: the
// verdict after its fix rounds, why the gates ran, one row per stage, the
// last review's findings, the QA checks, acceptance criteria and
// coverage. Lines are at depth 0 (the verdict) and deeper.
func GateReport(g *messages.GateReport) []Line {
	if g == nil {
		return nil
	}
	d := g.Decision
	line := func(depth int, s ...Span) Line { return Line{Kind: "gate_report", Depth: depth, Spans: s} }
	if !d.ReviewRequired && !d.QARequired && len(g.Stages) == 0 {
		return []Line{line(0, Span{Text: fmt.Sprintf("Quality gates: not required (%s, no risk path, no public API change)", Plural(len(d.Files), "file"))})}
	}
	verdict, tone := "PASSED", OK
	if !g.Passed {
		verdict, tone = "FAILED", Err
	}
	out := []Line{line(0, Span{Text: "Quality gates: "}, Span{Text: verdict, Tone: tone}, Span{Text: " after " + Plural(g.FixRounds, "fix round")})}
	for _, why := range d.Reasons {
		out = append(out, line(1, Span{Text: "required because: " + FirstLine(why)}))
	}
	for _, s := range g.Stages {
		l := line(1, Span{Text: fmt.Sprintf("%-6s %s: %-7s %s", termsafe.Line(s.Stage), RoundOf(Round(s), s.MaxRounds), s.Mark(), FirstLine(s.Summary))})
		l.Round = Round(s)
		out = append(out, l)
	}
	if rv := g.Review; rv != nil && len(rv.Issues) > 0 {
		out = append(out, line(1, Span{Text: fmt.Sprintf("review findings (last round, score %d/10):", rv.OverallScore)}))
		for _, is := range rv.Issues {
			loc := termsafe.Line(is.File)
			if is.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, is.Line)
			}
			out = append(out, line(2, Span{Text: fmt.Sprintf("[%s] %s %s", termsafe.Line(is.Severity), loc, termsafe.Line(is.Message))}))
		}
	}
	if q := g.QA; q != nil {
		out = append(out, qaLines(q, line)...)
	}
	return out
}

// qaLines are QA's checks, acceptance criteria, coverage and warnings.
func qaLines(q *messages.QAResult, line func(int, ...Span) Line) []Line {
	var out []Line
	if len(q.Checks) > 0 {
		out = append(out, line(1, Span{Text: "QA checks:"}))
	}
	for _, c := range q.Checks {
		mark := Span{Text: "ok  ", Tone: OK}
		if !c.Passed {
			mark = Span{Text: "FAIL", Tone: Err}
		}
		out = append(out, line(2, mark, Span{Text: fmt.Sprintf(" %-6s %s", termsafe.Line(c.Name), termsafe.Line(c.Command))}))
	}
	if len(q.Criteria) > 0 {
		out = append(out, line(1, Span{Text: "acceptance criteria:"}))
		for _, c := range q.Criteria {
			mark := Span{Text: "met  ", Tone: OK}
			if !c.Met {
				mark = Span{Text: "UNMET", Tone: Err}
			}
			out = append(out, line(2, mark, Span{Text: fmt.Sprintf(" %s — %s (by %s)", termsafe.Line(c.Criterion), FirstLine(c.Evidence), termsafe.Line(c.By))}))
		}
	}
	if cov := q.Coverage; cov != nil && len(cov.Packages) > 0 {
		out = append(out, line(1, Span{Text: fmt.Sprintf("coverage (%s):", termsafe.Line(cov.Command))}))
		pct := func(v *float64) string {
			if v == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.1f%%", *v)
		}
		for _, p := range cov.Packages {
			out = append(out, line(2, Span{Text: fmt.Sprintf("%s: %s → %s", termsafe.Line(p.Package), pct(p.Before), pct(p.After))}))
		}
	}
	for _, w := range q.Warnings {
		out = append(out, line(2, Span{Text: "warning: " + termsafe.Line(w)}))
	}
	return out
}

// LintLines describe the formatter and linter runs of a Code report, one
// line each: the command and how it ended.
func LintLines(rep messages.Report) []string {
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
			status = fmt.Sprintf("exit %d: %s", run.ExitCode, FirstLine(run.Output))
		}
		if len(run.Fixed) > 0 {
			status += ", fixed " + strings.Join(run.Fixed, ", ")
		}
		out = append(out, termsafe.Line(fmt.Sprintf("lint: %s `%s` — %s", run.Kind, run.Command, status)))
	}
	if cr.Lint.Note != "" {
		out = append(out, termsafe.Line("lint: "+cr.Lint.Note))
	}
	return out
}
