package repl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// While a command runs, the status area names project files relative to
// the project, as the transcript line above it does.
func TestStatusNamesProjectFilesRelative(t *testing.T) {
	script := &llmtest.Script{Agents: map[string][]llmtest.Step{
		"orchestrator": {
			{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "sleep 4; cat {{root}}/notes.txt"})}}},
			{Text: "read the notes"},
		},
	}}
	tm := start(t, script, options{args: []string{"--yolo"}, setup: func(root string) {
		if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("n\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}})
	tm.Expect("edit ❯")
	tm.Type("read the notes" + enter)
	tm.Expect("running ExecuteCommand sleep 4; cat notes.txt")
	tm.Expect("read the notes")
	tm.Type("/quit" + enter)
	tm.Exited()
}
