package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// markedProcesses lists the live processes whose command line holds marker.
func markedProcesses(marker string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		out = append(out, pid)
	}
	return out
}

// TestACPCancelLeavesNoSandboxProcess: commands cancelled in their first
// moments, then odin closed at once, leave no process behind. A cancel
// that lands before bwrap has let its namespace's init go on used to kill
// bwrap alone: the init, outside every group Odin signals, waited for
// bwrap forever (ppid 1, blocked on bwrap's eventfd).
func TestACPCancelLeavesNoSandboxProcess(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the commands would not run in a PID namespace")
	}
	const rounds = 12
	marker := fmt.Sprintf("odin-orphan-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		// Reap what this test started, whatever it found.
		for _, pid := range markedProcesses(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	env, root := acpEnv(t)
	var steps []llmtest.Step
	for i := range rounds {
		steps = append(steps, llmtest.Step{When: fmt.Sprintf("orphan round (%d)", i), ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ExecuteCommand", map[string]any{"command": "sleep 61 # " + marker}),
		}})
	}
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator", steps...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	env = append(env, "OPENAI_BASE_URL="+srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, w, sid := wiredSession(ctx, t, env, root, &acpClient{answer: "once"}, false)
	for i := range rounds {
		from := len(w.snapshot())
		answered := make(chan sdk.PromptResponse, 1)
		go func() {
			r, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: prompt(fmt.Sprintf("orphan round (%d)", i))})
			if err != nil {
				t.Errorf("round %d: %v", i, err)
			}
			answered <- r
		}()
		w.waitFor(ctx, t, from, "the command's tool_call", func(m wireMsg) bool {
			u, ok := m.update()
			return ok && u.Kind == "tool_call" && u.ToolKind == "execute"
		})
		if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: sid}); err != nil {
			t.Fatal(err)
		}
		if r := <-answered; r.StopReason != sdk.StopReasonCancelled {
			t.Fatalf("round %d: answered %q, want cancelled", i, r.StopReason)
		}
	}
	// The editor goes away while the last commands are being stopped.
	p.stop(t)
	// Dying takes the kernel a moment; a process still there after that
	// waits for nothing that will come.
	deadline := time.Now().Add(10 * time.Second)
	left := markedProcesses(marker)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		left = markedProcesses(marker)
	}
	for _, pid := range left {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		t.Errorf("process %d of a cancelled command outlived odin:\n%s", pid, st)
	}
}
