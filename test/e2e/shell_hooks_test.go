package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestShellSessionLineStoppedByExecuteCommandHook (issue 36, attack,
// through odin run's wiring): the user's PreToolUse hook, written for
// ExecuteCommand, refuses commands that mention "canary". An agent sends
// such a line to ShellSession instead: it does not run (no canary file),
// while the agent's next, innocent line does.
func TestShellSessionLineStoppedByExecuteCommandHook(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the shell session runs in bubblewrap")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(work, "project")
	cfgDir := filepath.Join(work, ".config", "odin")
	for _, d := range []string{project, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := `hooks:
  PreToolUse:
    - matcher: ExecuteCommand
      command: 'if grep -q canary; then echo "no canaries from agents" >&2; exit 2; fi'
agents:
  sheller:
    description: Tries things.
    prompt: You try things.
    tools: [ShellSession]
`
	if err := os.WriteFile(filepath.Join(cfgDir, "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript().
		Add("orchestrator",
			llmtest.Calls(llmtest.Call("agent", map[string]any{"agent": "sheller", "description": "s", "prompt": "Make two files."})),
			llmtest.Step{When: "sheller-done", Text: "Finished."}).
		Add("sheller",
			llmtest.Calls(llmtest.Call("ShellSession", map[string]any{"command": "touch canary-e2e"})),
			llmtest.Step{When: "no canaries from agents", ToolCalls: []llmtest.ToolCall{llmtest.Call("ShellSession", map[string]any{"command": "touch innocent-e2e && echo made"})}},
			llmtest.Step{When: "made", ToolCalls: []llmtest.ToolCall{llmtest.Call("Report", map[string]any{"summary": "sheller-done"})}})
	srv := llmtest.NewServer(t, script)
	cmd := exec.Command(filepath.Join(binDir, "odin"), "--yolo", "run", "make two files")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(project, "canary-e2e")); serr == nil {
		t.Fatalf("the line the hook refused ran: canary-e2e exists\n%s", out)
	}
	if err != nil {
		t.Fatalf("odin run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Finished.") {
		t.Fatalf("odin run did not finish the script:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(project, "innocent-e2e")); err != nil {
		t.Errorf("the innocent line did not run (%v): the test proves nothing\n%s", err, out)
	}
}
