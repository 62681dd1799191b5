package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// An isolated specialist's commands (an Env rooted in its worktree) may
// write the worktree and not the project the session's launcher is made
// for: the sandbox's writable root follows the Env's.
func TestExecuteCommandWorktreeRoot(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "odin-exec-wt-")
	if err != nil {
		t.Skip("no /var/tmp")
	}
	defer os.RemoveAll(base)
	base, _ = filepath.EvalSymlinks(base)
	project, tree := filepath.Join(base, "project"), filepath.Join(base, "state", "tree")
	for _, d := range []string{project, tree} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: project, Protected: []string{filepath.Join(base, "state")}})
	if st := l.Status(); st.Refuse {
		t.Skipf("bubblewrap unavailable: %s", st)
	}
	tl := NewExecuteCommand(ExecuteCommandOptions{Launcher: l})
	res, err := tl.Run(t.Context(), &tool.Env{Root: tree, Mode: "edit"}, mustJSON(t, map[string]any{
		"command": fmt.Sprintf("touch in-tree; touch %s/canary", project),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tree, "in-tree")); err != nil {
		t.Errorf("the command could not write its worktree: %v\n%s", err, res.Output)
	}
	if _, err := os.Stat(filepath.Join(project, "canary")); err == nil {
		t.Errorf("a command rooted in the worktree wrote the project:\n%s", res.Output)
	}
}
