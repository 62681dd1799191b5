package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/hooks"
	"github.com/odin-code/odin/tools/tool"
)

// TestShellSessionObeysExecuteCommandHooks (issue 36, attack): a
// PreToolUse hook the user wrote for ExecuteCommand also judges every
// ShellSession line. The hook refuses lines that mention "canary": such a
// line never runs (the canary file is absent, in the directory the shell
// was in), while the other lines run; the hook sees the shell's working
// directory. Python's snippets go past the same hook.
func TestShellSessionObeysExecuteCommandHooks(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the hook is a python3 one-liner")
	}
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	judge := `python3 -c '
import json, sys
d = json.load(sys.stdin)
i = d["tool_input"]
line = i.get("command", "") + i.get("code", "")
open(sys.argv[1], "a").write("%s %s\n" % (d["tool_name"], d.get("command_dir", "")))
if "canary" in line:
    print("no canaries here", file=sys.stderr)
    sys.exit(2)
' ` + filepath.Join(root, "hook.log")
	h, err := hooks.New(map[string][]config.Hook{hooks.PreToolUse: {{Matcher: "ExecuteCommand", Command: judge}}},
		hooks.Options{Root: root, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	sessions := NewSessions()
	defer sessions.Close()
	shell := WithHooks(h)(NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions))
	py := WithHooks(h)(NewPython(ExecuteCommandOptions{Launcher: l}, sessions))
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1"}

	res, oc := shellCall(t, shell, env, map[string]any{"command": "cd sub && touch allowed-1"})
	if oc.ExitCode != 0 || res.IsError {
		t.Fatalf("an innocent line failed:\n%s", res.Output)
	}
	res, _ = shellCall(t, shell, env, map[string]any{"command": "touch canary-shell"})
	if !res.Denied || !strings.Contains(res.Output, "no canaries here") {
		t.Errorf("the hook's refusal did not stop the line:\n%s", res.Output)
	}
	res, _ = shellCall(t, shell, env, map[string]any{"command": "touch allowed-2"})
	if res.IsError {
		t.Errorf("the line after the refused one failed:\n%s", res.Output)
	}
	pres, err := py.Run(t.Context(), env, mustJSON(t, map[string]any{"code": "open('canary-python', 'w').write('x')"}))
	if err != nil {
		t.Fatal(err)
	}
	if !pres.Denied {
		t.Errorf("the hook did not stop the Python snippet:\n%s", pres.Output)
	}
	for _, f := range []string{"sub/canary-shell", "canary-shell", "canary-python", "sub/canary-python"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s exists: a line the hook refused ran", f)
		}
	}
	for _, f := range []string{"sub/allowed-1", "sub/allowed-2"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: an allowed line did not run: %v", f, err)
		}
	}
	log, _ := os.ReadFile(filepath.Join(root, "hook.log"))
	want := "ShellSession \nShellSession " + filepath.Join(root, "sub") + "\nShellSession " + filepath.Join(root, "sub") + "\nPython \n"
	if string(log) != want {
		t.Errorf("the hook saw:\n%s\nwant:\n%s", log, want)
	}
}
