package term

import "strings"

// ColorDiff colours a unified diff line by line: file headers bold,
// additions green, removals red, hunk headers cyan. At ColorNone it returns
// the diff unchanged; in mono the +/- markers already carry the meaning.
func ColorDiff(th *Theme, diff string) string {
	if th.level == ColorNone || diff == "" {
		return diff
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(diff, "\n") {
		body := strings.TrimSuffix(line, "\n")
		nl := line[len(body):]
		switch {
		case body == "":
		case strings.HasPrefix(body, "+++"), strings.HasPrefix(body, "---"), strings.HasPrefix(body, "diff "):
			body = th.Paint(th.DiffFile, body)
		case body[0] == '+':
			body = th.Paint(th.DiffAdd, body)
		case body[0] == '-':
			body = th.Paint(th.DiffDel, body)
		case strings.HasPrefix(body, "@@"):
			body = th.Paint(th.DiffHunk, body)
		}
		b.WriteString(body)
		b.WriteString(nl)
	}
	return b.String()
}
