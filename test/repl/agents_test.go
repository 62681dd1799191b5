package repl

import (
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestAgentsListsRuns: /agents shows the session's agent runs across
// turns — a finished one with its last activities, and a background one
// while it still runs (the turn waits for it) — then the specialists.
func TestAgentsListsRuns(t *testing.T) {
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{llmtest.Call("agent", map[string]any{"agent": "search", "description": "find main", "prompt": "find func main in {{root}}"})}},
			{When: "search specialist finished", Text: "main is in main.go"},
			{When: "look slowly", ToolCalls: []llmtest.ToolCall{llmtest.Call("agent", map[string]any{"agent": "search", "description": "slow look", "prompt": "look slowly", "run_in_background": true})}},
			{When: "Started search run search-2", Text: "started it"},
			{When: "Background agent runs you started", Text: "slow look reported"},
		},
		"search": {
			{When: "find func main", ToolCalls: []llmtest.ToolCall{llmtest.Call("Grep", map[string]any{"pattern": "func main", "path": "{{root}}"})}},
			{When: "No matches", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"query": "main", "findings": []any{}, "summary": "main.go:1", "confidence": 1})}},
			{When: "look slowly", Hold: "slow", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"query": "slow", "findings": []any{}, "summary": "slow done", "confidence": 1})}},
		},
	}}
	tm := start(t, script, options{})
	tm.Expect("edit ❯")
	tm.Type("where is main?" + enter)
	tm.Expect("main is in main.go")
	tm.Type("/agents search" + enter)
	tm.Expect("/agents takes no arguments")
	tm.Type("/agents" + enter)
	tm.Expect("search-1")
	tm.Expect("last: Grep")
	tm.Expect("Specialists:")
	tm.Type("look slowly" + enter)
	tm.held("slow")
	tm.Type("/agents" + enter)
	tm.Expect("running (background)")
	tm.Srv.Release("slow")
	tm.Expect("slow look reported")
	tm.Type("/quit" + enter)
	tm.Exited()
}
