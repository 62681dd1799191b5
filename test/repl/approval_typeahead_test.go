package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestTypeAheadNeverAnswersAnApproval (issue 26): the user is typing when
// an approval box opens for a command that would create a canary. The
// words "yes any name" — whose y, a and n once answered the box — go to
// the input and, on Enter, are queued as a message; the command does not
// run and the box stays open. Only the digit alone on the line, then
// Enter, answers it, and then the canary appears.
func TestTypeAheadNeverAnswersAnApproval(t *testing.T) {
	// rm -r is destructive, so edit mode asks before running it.
	const cmd = "rm -rf build && echo ran > canary.txt"
	tm := start(t, steps(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": cmd})}}},
		llmtest.Step{Text: "the command ran"},
		llmtest.Step{When: "yes any name", Text: "noted your message"},
	), options{setup: func(root string) {
		os.MkdirAll(filepath.Join(root, "build"), 0o755)
	}})
	canary := filepath.Join(tm.Root, "canary.txt")
	tm.Expect("edit ❯")
	tm.Type("make the canary" + enter)
	tm.Expect("approval needed: orchestrator asks to run ExecuteCommand")

	// One key per write, as a person types: keys written together reach
	// the REPL as one word, which the old code ignored rather than read
	// as an answer.
	for _, r := range "yes any name" {
		tm.Type(string(r))
		time.Sleep(20 * time.Millisecond)
	}
	tm.Type(enter)
	_, queued := tm.wait("⏵ queued edit yes any name", waitFor)
	screen := tm.screen()
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatalf("the command ran on typed text: canary stat = %v", err)
	}
	for _, answered := range []string{"⎿ allowed once", "⎿ allowed for this session", "⎿ denied"} {
		if strings.Contains(screen, answered) {
			t.Fatalf("typed text answered the approval (%q on the screen)", answered)
		}
	}
	if !queued {
		t.Fatalf("the typed text was not queued as a message; screen so far:\n%s", tm.tail(3000))
	}
	// The box is drawn again below the queue: still open, still asking,
	// and saying how to answer.
	tm.Expect("1 allow once · 2 allow for this session · 3 deny")
	tm.Expect("the number alone + Enter")
	if n := len(tm.Srv.RequestsFor("orchestrator")); n != 1 {
		t.Fatalf("%d orchestrator requests while the approval is open, want 1 (the tool result would be the second)", n)
	}

	tm.Type("1" + enter)
	tm.Expect("allowed once: ExecuteCommand " + cmd)
	tm.Expect("the command ran")
	tm.Expect("noted your message")
	if b, err := os.ReadFile(canary); err != nil || string(b) != "ran\n" {
		t.Errorf("canary after the approval = %q, %v; want the command's output", b, err)
	}
	// The typed text reached the model as the user's message.
	var delivered bool
	for _, r := range tm.Srv.RequestsFor("orchestrator") {
		for _, m := range r.Body.LLMMessages() {
			if m.Role == "user" && strings.Contains(m.Content, "yes any name") {
				delivered = true
			}
		}
	}
	if !delivered {
		t.Errorf("the queued message never reached the model")
	}
	tm.Type("/quit" + enter)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}
