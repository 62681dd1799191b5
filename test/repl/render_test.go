package repl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestAnswerTableRendered: a Markdown table in an answer is printed with
// aligned columns and a ruled header, its pipes and dashes gone; a code
// fence is printed as its code, without the fence.
func TestAnswerTableRendered(t *testing.T) {
	answer := "Sizes:\n\n| package | files |\n|---|--:|\n| **actors** | 120 |\n| cmd | 7 |\n\n```go\nfunc main() {}\n```\ndone\n"
	tm := start(t, steps(llmtest.Step{Text: answer}), options{cols: 80})
	tm.Expect("edit ❯")
	tm.Type("how big is it?" + enter)
	tm.Expect("package │ files")
	tm.Expect("────────┼──────")
	tm.Expect("actors  │ 120")
	tm.Expect("cmd     │ 7")
	tm.Expect("func main() {}")
	tm.Expect("done")
	screen := tm.screen()
	for _, raw := range []string{"|---", "| cmd |", "**actors**", "```"} {
		if strings.Contains(screen, raw) {
			t.Errorf("the raw Markdown %q is on the screen", raw)
		}
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}

// TestApprovalReasonWrapped: in a narrow terminal the approval's "why" is
// wrapped onto more lines, never cut: its last words (what would allow the
// call) are on the screen.
func TestApprovalReasonWrapped(t *testing.T) {
	const cmd = "rm -rf build && echo ran > canary.txt"
	tm := start(t, steps(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": cmd})}}},
		llmtest.Step{Text: "the command was denied"},
	), options{cols: 50, setup: func(root string) {
		os.MkdirAll(filepath.Join(root, "build"), 0o755)
	}})
	tm.Expect("edit ❯")
	tm.Type("clean up" + enter)
	tm.Expect("approval needed")
	tm.Expect("why: ")
	tm.Expect("1 allow once")
	box := tm.screen()
	i := strings.LastIndex(box, "why: ")
	j := strings.LastIndex(box, "1 allow once")
	if i < 0 || j < i {
		t.Fatalf("no reason in the box:\n%s", tm.tail(2000))
	}
	why := box[i:j]
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(why), "\n") {
		if strings.TrimSpace(strings.Trim(l, "│ ")) != "" {
			lines++
		}
		if strings.Contains(l, "…") {
			t.Errorf("the reason was cut: %q", l)
		}
	}
	if lines < 2 {
		t.Errorf("the reason was not wrapped in a 50-column terminal:\n%s", why)
	}
	tm.Type("3" + enter)
	tm.Expect("the command was denied")
	tm.Type("/quit" + enter)
	tm.Exited()
}

// TestInterimAnswerOneLine: the answer the Orchestrator gave before the
// quality gates is one dim progress line, not printed in full; the answer
// written after the gates is printed in full.
func TestInterimAnswerOneLine(t *testing.T) {
	interim := "Tokens now expire after an hour.\n\nDetails that only the interim answer has: INTERIM-SECOND-PARAGRAPH."
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": "{{root}}/auth/token.go"})}},
			{When: "24 * time.Hour", ToolCalls: []llmtest.ToolCall{llmtest.Call("EditTool", map[string]any{"file_path": "{{root}}/auth/token.go", "old_string": "24 * time.Hour", "new_string": "time.Hour"})}},
			{When: "Edited", Text: interim},
		},
		"review": {
			{ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"files_reviewed": []any{"auth/token.go"}, "issues": []any{}, "overall_score": 9, "summary": "Fine.", "approved": true})}},
		},
		"synthesis": {{Text: "Tokens now live one hour; review and QA passed."}},
	}}
	// QA compiles the project in the sandbox: with the user's build cache
	// beneath its own (as Odin gives it) that takes a second, not minutes.
	var env []string
	if gc, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(gc)))
	}
	tm := start(t, script, options{cols: 100, env: env, setup: func(root string) {
		os.MkdirAll(filepath.Join(root, "auth"), 0o755)
		os.WriteFile(filepath.Join(root, "go.mod"), []byte("module shop\n\ngo 1.22\n"), 0o644)
		os.WriteFile(filepath.Join(root, "auth", "token.go"), []byte("package auth\n\nimport \"time\"\n\n// ttl is how long a token lives.\nvar ttl = 24 * time.Hour\n"), 0o644)
	}})
	tm.Expect("edit ❯")
	tm.Type("make tokens expire after an hour" + enter)
	tm.Expect("odin (before the gates): Tokens now expire after an hour.")
	tm.Expect("quality gates: review and QA required")
	if _, ok := tm.wait("Answer:", waitFor); !ok {
		var keep []string
		for _, l := range strings.Split(tm.screen(), "\n") {
			if strings.TrimSpace(l) != "" && !strings.Contains(l, "thinking") {
				keep = append(keep, l)
			}
		}
		t.Fatalf("no answer after the gates; screen:\n%s", strings.Join(keep, "\n"))
	}
	tm.Expect("Tokens now live one hour; review and QA passed.")
	if strings.Contains(tm.screen(), "INTERIM-SECOND-PARAGRAPH") {
		t.Errorf("the interim answer was printed in full:\n%s", tm.tail(3000))
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}
