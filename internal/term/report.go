package term

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

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
