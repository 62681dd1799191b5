package viewer_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/messages"
)

// TestPageFormattersMatchPresent: the page words what the server sends
// it, but sums costs and counts calls itself; its two formatters must
// read exactly as internal/present's, and its event log must show the
// words of the event's line. Run under node, the page's own module.
func TestPageFormattersMatchPresent(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: it runs the page's format.js")
	}
	costs := []struct {
		USD     float64 `json:"usd"`
		Unknown bool    `json:"unknown"`
	}{{0, false}, {0, true}, {0.5, true}, {0.01234, false}, {12.3456789, false}, {0.00005, false}, {1e-9, true}}
	counts := []int{0, 1, 2, 11}
	evs := []messages.Event{
		messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "qa", Round: 1, Run: 1, Passed: false, Summary: "1 check failed"}, Done: true},
		messages.GateStage{GateStageResult: messages.GateStageResult{Stage: "qa", Round: 2, Run: 2}},
		messages.ToolFinished{Origin: messages.Origin{Agent: "code", TaskID: "t1"}, Name: "ExecuteCommand", Denied: true, Output: "Permission denied: `rm -rf /`"},
		messages.TurnStarted{Input: messages.UserMessage{Body: "add rate limiting"}},
	}
	var lines []present.Line
	var want struct {
		Money  []string `json:"money"`
		Plural []string `json:"plural"`
		Lines  []string `json:"lines"`
	}
	for _, c := range costs {
		want.Money = append(want.Money, present.Cost(c.USD, c.Unknown))
	}
	for _, n := range counts {
		want.Plural = append(want.Plural, present.Plural(n, "fix round"))
	}
	for _, ev := range evs {
		l := present.Describe(ev)
		lines = append(lines, l)
		// The words after the mark, as the terminal prints them.
		want.Lines = append(want.Lines, lineWords(l))
	}
	in, err := json.Marshal(map[string]any{"costs": costs, "counts": counts, "lines": lines})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := filepath.Abs("assets/format.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `import { money, plural, lineText } from "file://` + mod + `";
const x = JSON.parse(process.argv[1]);
console.log(JSON.stringify({ money: x.costs.map((c) => money(c.usd, c.unknown)), plural: x.counts.map((n) => plural(n, "fix round")), lines: x.lines.map(lineText) }));`
	out, err := exec.Command(node, "--input-type=module", "-e", script, string(in)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got struct {
		Money  []string `json:"money"`
		Plural []string `json:"plural"`
		Lines  []string `json:"lines"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("format.js disagrees with internal/present (-Go +page):\n%s", diff)
	}
}

// lineWords is a line's text without its leading mark (a glyph, no
// letters), as the page's event log shows it.
func lineWords(l present.Line) string {
	text := l.Text()
	if len(l.Spans) > 1 {
		mark := l.Spans[0].Text
		hasWord := false
		for _, r := range mark {
			if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				hasWord = true
			}
		}
		if !hasWord {
			text = text[len(mark):]
		}
	}
	for len(text) > 0 && text[0] == ' ' {
		text = text[1:]
	}
	return text
}

// TestPageRelPathMatchesPresent: the transcript's diff captions name a
// project file relative to the project as the terminal does
// (present.RelPath); a file outside it keeps its absolute path.
func TestPageRelPathMatchesPresent(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: it runs the page's format.js")
	}
	cases := [][2]string{
		{"/home/u/proj", "/home/u/proj/api/server.go"},
		{"/home/u/proj", "/home/u/proj"},
		{"/home/u/proj/", "/home/u/proj/./a/../b.go"},
		{"/home/u/proj", "/home/u/project2/x.go"},
		{"/home/u/proj", "/etc/hosts"},
		{"/home/u/proj", "/home/u/proj/../secret"},
		{"/home/u/proj", "relative/x.go"},
		{"", "/home/u/proj/x.go"},
		{"/", "/etc/hosts"},
	}
	var want []string
	for _, c := range cases {
		want = append(want, present.RelPath(c[0], c[1]))
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := filepath.Abs("assets/format.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `import { relPath } from "file://` + mod + `";
console.log(JSON.stringify(JSON.parse(process.argv[1]).map(([root, p]) => relPath(root, p))));`
	out, err := exec.Command(node, "--input-type=module", "-e", script, string(in)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("format.js relPath disagrees with present.RelPath (-Go +page):\n%s", diff)
	}
}
