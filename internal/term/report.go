package term

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/odin-code/odin/messages"
)

// Verdict says whether a specialist's report is a success and the word to
// show for it. A specialist can finish its run (status ok) and still report
// a failure in its result: a review that requests changes, QA checks that
// failed, failing tests. Showing those as "✓ ok" would contradict the gate
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

// StageRound is the round of a gate stage as users see it: the stage's own
// run in the turn, from 1 (QA's first run is round 1 even after a fix
// round); records without the count fall back to ShownRound.
func StageRound(s messages.GateStageResult) int {
	if s.Run > 0 {
		return s.Run
	}
	return s.ShownRound()
}

// Plural is "1 call", "2 calls".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WrapWords wraps plain text (no escape sequences) at spaces only, to
// width display columns; a word longer than width keeps a line of its
// own, whole. Unlike ansi.Wrap it never breaks at a hyphen, so a flag such
// as --allow or a path stays in one piece for copying. width <= 0: one
// line.
func WrapWords(s string, width int) []string {
	words := strings.Fields(s)
	if width <= 0 || len(words) == 0 {
		return []string{strings.Join(words, " ")}
	}
	var lines []string
	cur, curW := "", 0
	for _, w := range words {
		ww := ansi.StringWidth(w)
		switch {
		case cur == "":
			cur, curW = w, ww
		case curW+1+ww <= width:
			cur, curW = cur+" "+w, curW+1+ww
		default:
			lines = append(lines, cur)
			cur, curW = w, ww
		}
	}
	return append(lines, cur)
}
