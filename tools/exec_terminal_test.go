package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/tools/tool"
)

// spawnTerminal is an editor's terminal: it runs what it is asked, in the
// test's environment, and records what Odin did with it.
type spawnTerminal struct {
	mu                      sync.Mutex
	created, kills, release int
	argv                    []string
}

type spawned struct {
	t    *spawnTerminal
	cmd  *exec.Cmd
	out  *strings.Builder
	mu   *sync.Mutex
	done chan struct{}
}

func (s *spawnTerminal) CreateTerminal(ctx context.Context, argv []string, dir string, limit int) (TerminalHandle, error) {
	s.mu.Lock()
	s.created++
	s.argv = argv
	s.mu.Unlock()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EDITOR_TOKEN=editor-token-value")
	h := &spawned{t: s, cmd: cmd, out: &strings.Builder{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	w := lockedWriter{h.mu, h.out}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(h.done) }()
	return h, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (h *spawned) WaitForExit(ctx context.Context) (*int, *string, error) {
	select {
	case <-h.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	ws := h.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		s := ws.Signal().String()
		return nil, &s, nil
	}
	c := ws.ExitStatus()
	return &c, nil, nil
}

func (h *spawned) Output(context.Context) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String(), false, nil
}

func (h *spawned) Kill(context.Context) error {
	h.t.mu.Lock()
	h.t.kills++
	h.t.mu.Unlock()
	return h.cmd.Process.Signal(syscall.SIGTERM)
}

func (h *spawned) Release(context.Context) error {
	h.t.mu.Lock()
	h.t.release++
	h.t.mu.Unlock()
	if h.cmd.ProcessState == nil {
		_ = h.cmd.Process.Kill()
	}
	return nil
}

// TestExecuteCommandInTheEditorsTerminal: with a terminal and bubblewrap,
// the command runs in the terminal (Odin's binary on a handoff file), its
// output and exit code are the tool's result, and the sandbox holds: no
// canary, no secret of the editor. A timeout kills the terminal's command;
// every terminal is released.
func TestExecuteCommandInTheEditorsTerminal(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: root})
	if !l.CanHandoff() {
		t.Skip("no bubblewrap here: commands are not handed to a terminal")
	}
	outside, err := os.MkdirTemp("/var/tmp", "odin-term-canary-")
	if err != nil {
		t.Skip("no /var/tmp for the canary")
	}
	defer os.RemoveAll(outside)
	term := &spawnTerminal{}
	opts := ExecuteCommandOptions{Launcher: l, Terminal: term, HandoffDir: filepath.Join(t.TempDir(), "handoff")}
	env := &tool.Env{Root: root, Mode: "edit"}
	res, oc := runCommand(t, opts, env, ExecuteCommandInput{Command: "echo token=[$EDITOR_TOKEN]; touch " + outside + "/canary; touch made; exit 3"})
	if term.created != 1 || len(term.argv) != 3 || term.argv[1] != "__odin_sandbox_exec" {
		t.Fatalf("terminals created: %d, argv %q", term.created, term.argv)
	}
	if oc.ExitCode != 3 || !strings.Contains(res.Output, "token=[]") || !strings.Contains(res.Output, "Exit code: 3") {
		t.Errorf("result: exit %d\n%s", oc.ExitCode, res.Output)
	}
	if _, err := os.Stat(filepath.Join(outside, "canary")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the terminal's command wrote outside the project: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err != nil {
		t.Errorf("the terminal's command could not write in the project: %v\n%s", err, res.Output)
	}
	if entries, _ := os.ReadDir(opts.HandoffDir); len(entries) != 0 {
		t.Errorf("handoff files left: %v", entries)
	}

	res, oc = runCommand(t, opts, env, ExecuteCommandInput{Command: "echo started; sleep 60", Timeout: 300})
	if !oc.TimedOut || !res.IsError || !strings.Contains(res.Output, "started") {
		t.Errorf("a timed-out command: %+v\n%s", oc, res.Output)
	}
	if term.kills != 1 || term.release != 2 {
		t.Errorf("kills %d, releases %d; want 1 and 2", term.kills, term.release)
	}
}
