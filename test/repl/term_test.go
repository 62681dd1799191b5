package repl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// hostile is model text aimed at the terminal: OSC 52 (clipboard write),
// OSC 8 (a link disguised as text), CSI 2J (clear screen), an 8-bit CSI,
// a DCS string, BEL and a bidi override.
const hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example/\x1b\\click here\x1b]8;;\x1b\\ \x1b[2J\u009b2J\x1bPq#0\x1b\\then\x07 done\u202efdp.exe"

// banned are byte strings that only the model's text could put on the
// terminal: Odin's own output (Bubble Tea's cursor movement and Odin's SGR
// colours) never contains them.
var banned = []string{"\x1b]52", "\x1b]8;", "\x1b[2J", "\u009b", "\x1bP", "\x07", "\u202e", "cm0gLXJmIH4", "evil.example"}

func (tm *term) rawBytes() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.raw.Bytes())
}

// TestModelCannotControlTheTerminal: streamed answer text (Markdown and
// code), narration, a tool error naming a file with escape sequences in
// its name and the final answer reach the pty without a single one of the
// model's control sequences; the text around them is shown.
func TestModelCannotControlTheTerminal(t *testing.T) {
	evil := "evil\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J.txt"
	tm := start(t, steps(
		llmtest.Step{When: "show me", Text: "Narration **" + hostile + "** `" + hostile + "`\n",
			ToolCalls: []llmtest.ToolCall{{Name: "ReadFile", Arguments: llmtest.Args(map[string]any{"file_path": "{{root}}/missing-" + evil})}}},
		llmtest.Step{When: "missing-", Text: "Answer: " + hostile + "\n\n```\n" + hostile + "\n```\nend of answer"},
	), options{})
	tm.Expect("edit ❯")
	tm.Type("show me" + enter)
	tm.Expect("click here")
	tm.Expect("missing-evil")
	tm.Expect("Answer: click here")
	tm.Expect("end of answer")
	tm.Type(ctrlD)
	if err := tm.Exited(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	raw := string(tm.rawBytes())
	for _, b := range banned {
		if strings.Contains(raw, b) {
			t.Errorf("the pty received %q from the model", b)
		}
	}
	if !strings.Contains(tm.screen(), "<U+202E>") {
		t.Errorf("the bidi override is not shown visibly")
	}
}

// TestDenialIsShownWhole: in a narrow terminal the denial of a command the
// user refused is wrapped, not cut, whether the Orchestrator or a
// specialist asked: its advice on how to allow the call reaches the screen
// to the last word.
func TestDenialIsShownWhole(t *testing.T) {
	rm := llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "ExecuteCommand", Arguments: llmtest.Args(map[string]any{"command": "rm -rf build"})}}}
	for _, tc := range []struct {
		name   string
		script *llmtest.Script
		label  string
		// asked: the denial is the user's answer to an approval; else the
		// policy refuses without asking (the test agent runs test runners
		// and read-only commands only), and its whole rule is shown.
		asked bool
		whole []string
	}{
		{"orchestrator", steps(rm, llmtest.Step{Text: "could not clean"}), "⎿ denied: Permission denied", true, []string{
			"the user can run with --allow 'PATTERN' (a command pattern such as 'go test *') or add the pattern to permissions.allowed_commands",
			"or run with --yolo. Do not retry the same call; find another way or ask the user.",
		}},
		{"specialist", &llmtest.Script{Agents: map[string][]llmtest.Step{
			"orchestrator": {
				{ToolCalls: []llmtest.ToolCall{{Name: "agent", Arguments: llmtest.Args(map[string]any{"agent": "test", "description": "clean", "prompt": "remove the build directory"})}}},
				{When: "test specialist", Text: "could not clean"},
			},
			"test": {rm, {When: "Permission denied", ToolCalls: []llmtest.ToolCall{{Name: "Report", Arguments: llmtest.Args(map[string]any{"command": "rm -rf build", "passed": 0, "failed": 0, "summary": "denied"})}}}},
		}}, "⎿ test denied: Permission denied", false, []string{
			"the test agent may run only test runners (go test, pytest, npm test, cargo test, jest, vitest, make test...) and read-only commands; `rm -rf build` is neither (rule agent-write-filter).",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := start(t, tc.script, options{cols: 60, setup: func(root string) {
				os.MkdirAll(filepath.Join(root, "build"), 0o755)
				os.WriteFile(filepath.Join(root, "build", "out.bin"), []byte("x"), 0o644)
			}})
			tm.Expect("edit ❯")
			tm.Type("clean the build" + enter)
			if tc.asked {
				tm.Expect("3 deny")
				tm.Type("3" + enter)
			}
			tm.Expect(tc.label)
			tm.Expect("could not clean")
			tm.Type(ctrlD)
			if err := tm.Exited(); err != nil {
				t.Fatalf("exit: %v", err)
			}
			screen := strings.Join(strings.Fields(tm.screen()), " ")
			for _, want := range tc.whole {
				if !strings.Contains(screen, want) {
					t.Errorf("the denial's advice %q is not on the screen:\n%s", want, tm.tail(3000))
				}
			}
			if _, err := os.Stat(filepath.Join(tm.Root, "build", "out.bin")); err != nil {
				t.Errorf("the denied command ran: %v", err)
			}
		})
	}
}
