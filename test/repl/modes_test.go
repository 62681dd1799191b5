package repl

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestLineModeWithoutATerminal: with stdin and stdout piped, odin reads
// one input per line, runs them in order and prints plain text.
func TestLineModeWithoutATerminal(t *testing.T) {
	srv := llmtest.NewServer(t, steps(
		llmtest.Step{When: "first", Text: "# One\n\n**first** answer\n"},
		llmtest.Step{When: "second", Text: "second answer"},
	))
	root, state := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, odinBin)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + filepath.Join(state, "s"),
		"XDG_CONFIG_HOME=" + filepath.Join(state, "c"), "OPENAI_BASE_URL=" + srv.URL(), "OPENAI_API_KEY=test",
		"ODIN_MODELS_MAIN=scripted-model", "ODIN_MODELS_SMALL=scripted-model", "TERM=xterm-256color"}
	cmd.Stdin = strings.NewReader("first\n/mode ask\nsecond\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("odin: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	s := out.String()
	if strings.Contains(s, "\x1b") {
		t.Errorf("line mode printed escape sequences:\n%q", s)
	}
	want := []string{"❯ [edit] first", "# One", "**first** answer", "mode: ask", "❯ [ask] second", "second answer"}
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("output lacks %q after offset %d:\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

// TestNoColor: NO_COLOR keeps emphasis but drops every colour.
func TestNoColor(t *testing.T) {
	tm := start(t, steps(llmtest.Step{Text: "# Title\n\n**bold** and `code`\n"}), options{env: []string{"NO_COLOR=1"}})
	tm.Expect("edit ❯")
	tm.Type("hi" + enter)
	tm.Expect("bold and code")
	tm.mu.Lock()
	raw := tm.raw.String()
	tm.mu.Unlock()
	if strings.Contains(raw, "38;5;") {
		t.Errorf("NO_COLOR output has colours:\n%q", raw)
	}
	if !strings.Contains(raw, "\x1b[1mbold") {
		t.Errorf("NO_COLOR output lost the bold:\n%q", raw)
	}
	tm.Type(ctrlD)
	tm.Exited()
}

// TestCustomCommand: .odin/commands/NAME.md becomes /NAME, its
// $ARGUMENTS filled in, run in the mode its front matter names.
func TestCustomCommand(t *testing.T) {
	tm := start(t, steps(llmtest.Step{When: "Review cmd/main.go", Text: "looks fine"}), options{setup: func(root string) {
		dir := filepath.Join(root, ".odin", "commands")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "review.md"), []byte("---\ndescription: Review files\nmode: ask\n---\nReview $ARGUMENTS for bugs."), 0o644)
	}})
	tm.Expect("edit ❯")
	tm.Type("/help" + enter)
	tm.Expect("Review files")
	tm.Type("/review cmd/main.go" + enter)
	tm.Expect("❯ [ask] Review cmd/main.go for bugs.")
	tm.Expect("looks fine")
	reqs := tm.Srv.RequestsFor("orchestrator")
	msgs := reqs[len(reqs)-1].Body.Messages
	if got := userWords(msgs[len(msgs)-1].Text()); got != "Review cmd/main.go for bugs." {
		t.Errorf("prompt sent = %q", got)
	}
	tm.Type("/quit" + enter)
	tm.Exited()
}
