package tools

import (
	"os/exec"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// BenchmarkShellCall compares one command in the persistent shell with the
// same command through ExecuteCommand, which sets a new sandbox up for
// every call. Both under bubblewrap.
func BenchmarkShellCall(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap is not installed")
	}
	root := b.TempDir()
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: root})
	if st := l.Status(); st.Refuse {
		b.Skipf("bubblewrap is unusable: %s", st)
	}
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "b", SessionID: "b"}
	in := mustJSON(b, map[string]any{"command": "echo hi"})
	b.Run("ShellSession", func(b *testing.B) {
		sessions := NewSessions()
		defer sessions.Close()
		tl := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
		if _, err := tl.Run(b.Context(), env, in); err != nil { // start the shell
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if res, err := tl.Run(b.Context(), env, in); err != nil || res.IsError {
				b.Fatal(err, res.Output)
			}
		}
	})
	b.Run("ExecuteCommand", func(b *testing.B) {
		tl := NewExecuteCommand(ExecuteCommandOptions{Launcher: l})
		for b.Loop() {
			if res, err := tl.Run(b.Context(), env, in); err != nil || res.IsError {
				b.Fatal(err, res.Output)
			}
		}
	})
}
