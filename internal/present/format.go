package present

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
)

// CostUnknown is how a cost reads when none of the tokens had a known
// price: never "$0.0000", which would read as free.
const CostUnknown = "cost unknown"

// Cost shows a cost in US dollars: "$0.0123"; CostUnknown when none of
// the tokens had a known price; "$0.0123 + unknown" when only some had.
func Cost(usd float64, unknown bool) string {
	switch {
	case unknown && usd == 0:
		return CostUnknown
	case unknown:
		return fmt.Sprintf("$%.4f + unknown", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

// UsageCost is Cost of a usage record.
func UsageCost(u messages.Usage) string { return Cost(u.Cost, u.CostUnknown) }

// Duration formats a duration for people: 850ms, 12s, 3m05s, 1h02m.
// Zero and negative durations read 0s.
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Wait formats a wait or a limit given to the millisecond (a retry's
// back-off, a rate limit, a specialist's deadline) in Go's notation:
// "1.5s", "250ms", "5m0s".
func Wait(d time.Duration) string { return d.Round(time.Millisecond).String() }

// Tokens formats a token count: 950, 1.2k, 34k, 1.5M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Plural is "1 call", "2 calls", "0 calls": a count with its noun, never
// "call(s)".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Round is the round of a gate stage as users see it: the stage's own run
// in the turn, from 1, so QA's first run is round 1 even after a fix
// round, and a fix carries its own number. Records from before the run
// was counted fall back to GateStageResult.ShownRound.
func Round(s messages.GateStageResult) int {
	if s.Run > 0 {
		return s.Run
	}
	return s.ShownRound()
}

// StageRound names a stage's round: "review round 2 of 3", or "review
// round 2" when the most rounds the stage may have is not known (max 0:
// events stored before GateStageResult.MaxRounds was kept).
func StageRound(stage string, round, max int) string {
	return termsafe.Line(stage) + " " + RoundOf(round, max)
}

// RoundOf is "round 2 of 3", or "round 2" when max is 0 (not known).
func RoundOf(round, max int) string {
	if max > 0 {
		return fmt.Sprintf("round %d of %d", round, max)
	}
	return fmt.Sprintf("round %d", round)
}

// FixRounds is the gates' verdict line: "passed after 1 fix round".
func FixRounds(passed bool, fixRounds int) string {
	v := "failed"
	if passed {
		v = "passed"
	}
	return v + " after " + Plural(fixRounds, "fix round")
}

// maxLine is how many columns of a one-line summary (a report's summary,
// an error) an event line keeps; the rest is in the transcript.
const maxLine = 160

// FirstLine is the sanitized first non-blank line of s, cut to 160
// columns on a character boundary.
func FirstLine(s string) string {
	s = strings.TrimSpace(termsafe.Text(s))
	line, _, _ := strings.Cut(s, "\n")
	return ansi.Truncate(termsafe.Line(line), maxLine, "…")
}

// Verdict says whether a specialist's report is a success and the word to
// show for it. A specialist can finish its run (status ok) and still report
// a failure in its result: a review that requests changes, QA checks that
// failed, failing tests. Showing those as "ok" would contradict the gate
// line below them.
func Verdict(r messages.Report) (ok bool, word string) {
	if r.Status != messages.ReportOK {
		return false, string(r.Status)
	}
	var res struct {
		Approved *bool `json:"approved"`
		Passed   any   `json:"passed"`
		Failed   *int  `json:"failed"`
		Issues   []struct {
			Severity string `json:"severity"`
		} `json:"issues"`
	}
	if len(r.Result) == 0 || json.Unmarshal(r.Result, &res) != nil {
		return true, string(r.Status)
	}
	if res.Approved != nil && !*res.Approved {
		return false, "changes requested"
	}
	for _, is := range res.Issues {
		if is.Severity == messages.SeverityCritical || is.Severity == messages.SeverityMajor {
			return false, "changes requested"
		}
	}
	if p, isBool := res.Passed.(bool); isBool && !p {
		return false, "failed"
	}
	if res.Failed != nil && *res.Failed > 0 {
		return false, fmt.Sprintf("%d failed", *res.Failed)
	}
	return true, string(r.Status)
}

// ToolLabel describes a tool call in a few words: its name and its main
// argument (path, pattern, command, URL), sanitized.
func ToolLabel(name, input string) string { return ToolLabelIn("", name, input) }

// ToolLabelIn is ToolLabel with the paths inside the workspace root shown
// relative to it (RelPath), as every front end shows them: the argument
// itself when it is a path, the words of a command that are.
func ToolLabelIn(root, name, input string) string {
	name = termsafe.Line(name)
	var args map[string]any
	if json.Unmarshal([]byte(input), &args) != nil {
		return name
	}
	for _, k := range []string{"file_path", "pattern", "command", "url", "query", "path", "description"} {
		if v, ok := args[k].(string); ok && v != "" {
			v = FirstLine(v)
			if root != "" {
				switch k {
				case "file_path", "path", "pattern":
					v = RelPath(root, v)
				case "command", "description":
					v = relWords(root, v)
				}
			}
			if r := []rune(v); len(r) > 60 {
				v = string(r[:60]) + "…"
			}
			return name + " " + v
		}
	}
	return name
}

// RelPath is path relative to root when it lies inside it ("." for root
// itself); a path outside root, a relative one, or any path when root is
// empty is returned as it is: outside the workspace only the absolute
// path says where.
func RelPath(root, path string) string {
	if root == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// relWords shows the words of s that are absolute paths inside root
// relative to it.
func relWords(root, s string) string {
	prefix := filepath.Clean(root)
	if !strings.Contains(s, prefix) {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if strings.HasPrefix(w, prefix) {
			words[i] = RelPath(root, w)
		}
	}
	return strings.Join(words, " ")
}
