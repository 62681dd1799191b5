package repl

import (
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// A specialist keeps its own todo list: while the code agent works, its
// list shows under its line in the status area, apart from the
// Orchestrator's.
func TestSpecialistTodosInTheStatusArea(t *testing.T) {
	todo := func(id, content, status string) map[string]any {
		return map[string]any{"id": id, "content": content, "status": status}
	}
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{{Name: "TodoWrite", Arguments: llmtest.Args(map[string]any{"todos": []any{todo("o1", "delegate the fix", "in_progress")}})}}},
			{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: llmtest.Args(map[string]any{"agent": "code", "description": "fix Run", "prompt": "Fix Run in main.go."})}}},
			{Text: "the code agent is done"},
		},
		"code": {
			{ToolCalls: []llmtest.ToolCall{{Name: "TodoWrite", Arguments: llmtest.Args(map[string]any{"todos": []any{
				todo("1", "read main.go", "completed"), todo("2", "rewrite the Run loop", "in_progress"), todo("3", "report", "pending")}})}}},
			{Hold: "working", ToolCalls: []llmtest.ToolCall{{Name: "Report", Arguments: llmtest.Args(map[string]any{"task": "fix Run", "summary": "fixed"})}}},
		},
	}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	tm.Type("fix the Run loop" + enter)
	tm.held("working")
	tm.Expect("code fix Run")
	tm.Expect("☐ todos 1/3 · rewrite the Run loop")
	tm.Expect("☐ todos 0/1 · delegate the fix")
	tm.Srv.Release("working")
	tm.Expect("the code agent is done")
	tm.Type("/quit" + enter)
	tm.Exited()
}
