package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

func steps(s ...llmtest.Step) *llmtest.Script {
	return &llmtest.Script{Agents: map[string][]llmtest.Step{"orchestrator": s}}
}

// TestTypeAheadRunsQueuedInputWithItsMode: a second task typed while the
// first runs is shown as queued with its mode, runs after the first, and
// runs in that mode (ask: no write tools offered to the model).
func TestTypeAheadRunsQueuedInputWithItsMode(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "first task", Hold: "first", Text: "first **answer**"},
		llmtest.Step{When: "second task", Text: "second answer"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("first task" + enter)
	tm.Expect("❯ [edit] first task")
	tm.held("first")
	tm.Type(shiftTab) // edit → ask
	tm.Expect("ask  ❯")
	tm.Type("second task" + enter)
	tm.Expect("⏵ queued ask second task")
	tm.Type("third task" + enter)
	tm.Expect("⏵ queued ask third task")
	tm.Type("/queue" + enter)
	tm.Expect("1. [ask] second task")
	tm.Expect("2. [ask] third task")
	tm.Type("/queue rm 2" + enter)
	tm.Expect("removed 1 queued input")
	if n := len(tm.Srv.RequestsFor("orchestrator")); n != 1 {
		t.Fatalf("%d model requests while the first turn is held, want 1", n)
	}
	tm.Srv.Release("first")
	tm.Expect("first answer")
	tm.Expect("❯ [ask] second task")
	tm.Expect("second answer")
	reqs := tm.Srv.RequestsFor("orchestrator")
	if len(reqs) != 2 {
		t.Fatalf("%d orchestrator requests, want 2", len(reqs))
	}
	if !slices.Contains(reqs[0].Body.ToolNames(), "WriteFile") {
		t.Errorf("the first (edit) turn was not offered WriteFile: %v", reqs[0].Body.ToolNames())
	}
	if slices.Contains(reqs[1].Body.ToolNames(), "WriteFile") {
		t.Errorf("the queued ask turn was offered WriteFile: %v", reqs[1].Body.ToolNames())
	}
	if strings.Contains(tm.screen(), "❯ [ask] third task") {
		t.Errorf("the removed input ran")
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestCtrlCCancelsTheTurn: Ctrl-C ends a running turn, the history stays
// valid, and the next input runs normally.
func TestCtrlCCancelsTheTurn(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{When: "slow task", Hold: "never", Text: "never shown"},
		llmtest.Step{When: "next task", Text: "next answer"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("slow task" + enter)
	tm.held("never")
	tm.Expect("odin thinking")
	tm.Type(ctrlC)
	tm.Expect("⏹ cancelled")
	tm.Type("next task" + enter)
	tm.Expect("❯ [edit] next task")
	tm.Expect("next answer")
	// The second request carries the cancelled exchange and the new input.
	reqs := tm.Srv.RequestsFor("orchestrator")
	last := reqs[len(reqs)-1].Body.Messages
	var users []string
	for _, m := range last {
		if m.Role == "user" {
			users = append(users, userWords(m.Text()))
		}
	}
	if len(users) != 2 || users[0] != "slow task" || users[1] != "next task" {
		t.Errorf("user messages of the next request = %q, want [slow task, next task]", users)
	}
	if strings.Contains(tm.screen(), "never shown") {
		t.Errorf("the cancelled turn's answer was shown")
	}
	// Ctrl-C twice on the idle prompt quits. The answer shows while its
	// turn still ends: a Ctrl-C then would cancel it instead.
	tm.Idle()
	tm.Type(ctrlC)
	tm.Expect("press Ctrl-C again to exit")
	tm.Type(ctrlC)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

// TestApproval: a command that needs approval in edit mode is shown
// inline; the answer decides whether it runs.
func TestApproval(t *testing.T) {
	tests := []struct {
		name, key, mark string
		removed         bool
	}{
		{"allow once", "1" + enter, "allowed once: ExecuteCommand rm -rf build", true},
		{"allow for the session", "2" + enter, "allowed for this session: ExecuteCommand rm -rf build", true},
		{"allow for the session with the arrows", arrowDown + arrowDown + enter, "allowed for this session: ExecuteCommand rm -rf build", true},
		{"deny", "3" + enter, "denied: ExecuteCommand rm -rf build", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := start(t, steps(
				llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "rm -rf build"})}}},
				llmtest.Step{Text: "cleaning done"},
			), options{setup: func(root string) {
				os.MkdirAll(filepath.Join(root, "build"), 0o755)
				os.WriteFile(filepath.Join(root, "build", "out.bin"), []byte("x"), 0o644)
			}})
			tm.Expect("edit ❯")
			tm.Type("clean the build" + enter)
			tm.Expect("approval needed: orchestrator asks to run ExecuteCommand")
			tm.Expect("rm -rf build")
			tm.Expect("1 allow once · 2 allow for this session · 3 deny")
			tm.Type(tt.key)
			tm.Expect(tt.mark)
			tm.Expect("cleaning done")
			_, err := os.Stat(filepath.Join(tm.Root, "build"))
			if removed := os.IsNotExist(err); removed != tt.removed {
				t.Errorf("build removed = %v, want %v (stat: %v)", removed, tt.removed, err)
			}
			tm.Type(ctrlD)
			if err := tm.Exited(); err != nil {
				t.Fatalf("exit: %v", err)
			}
		})
	}
}

// TestUndo: /undo restores the files of the last change set.
func TestUndo(t *testing.T) {
	tm := start(t, steps(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ReadFile", Arguments: llmtest.Args(map[string]any{"file_path": "{{root}}/notes.txt"})}}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "WriteFile", Arguments: llmtest.Args(map[string]any{"file_path": "{{root}}/notes.txt", "content": "changed\n"})}}},
		llmtest.Step{Text: "wrote the notes"},
	), options{setup: func(root string) {
		os.WriteFile(filepath.Join(root, "notes.txt"), []byte("original\n"), 0o644)
	}})
	tm.Expect("edit ❯")
	tm.Type("rewrite the notes" + enter)
	tm.Expect("wrote the notes")
	tm.Expect("+changed")
	if b, _ := os.ReadFile(filepath.Join(tm.Root, "notes.txt")); string(b) != "changed\n" {
		t.Fatalf("notes.txt = %q after the turn", b)
	}
	tm.Idle()
	tm.Type("/undo" + enter)
	tm.Expect("Restored 1 file ")
	if b, _ := os.ReadFile(filepath.Join(tm.Root, "notes.txt")); string(b) != "original\n" {
		t.Errorf("notes.txt = %q after /undo, want the original", b)
	}
	tm.Type("/undo" + enter)
	tm.Expect("nothing to undo")
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
