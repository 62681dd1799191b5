package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// Issue 36: a ShellSession's shell, its background job and its foreground
// command, and the bubblewrap around them, die with Odin even when Odin is
// killed with SIGKILL and has no chance to clean up. Checked by pid: every
// process between Odin and the two sleeps is gone within seconds.
func TestShellSessionDiesWithKilledOdin(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the shell session runs in bubblewrap")
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(work, ".config", "odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "agents:\n  sheller:\n    description: Tries things.\n    prompt: You try things.\n    tools: [ReadFile, ShellSession]\n"
	if err := os.WriteFile(filepath.Join(work, ".config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	bg, fg := "2718.281", "2719.314" // unique sleeps to find from the host
	script := llmtest.NewScript().
		Add("orchestrator", llmtest.Calls(llmtest.Call("agent", map[string]any{"agent": "sheller", "description": "s", "prompt": "Sleep."}))).
		Add("sheller", llmtest.Calls(llmtest.Call("ShellSession", map[string]any{"command": "sleep " + bg + " & sleep " + fg})))
	srv := llmtest.NewServer(t, script)
	cmd := exec.Command(filepath.Join(binDir, "odin"), "--yolo", "run", "sleep in the shell")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	odin := cmd.Process.Pid
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	var pids []int
	deadline := time.Now().Add(60 * time.Second)
	for {
		a, b := findCmdline("sleep "+bg), findCmdline("sleep "+fg)
		if a != 0 && b != 0 {
			pids = append(ancestorsBelow(a, odin), ancestorsBelow(b, odin)...)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the shell's sleeps never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	names := map[int]string{}
	for _, p := range pids {
		names[p] = procName(p)
	}
	t.Logf("processes under odin (%d): %v", odin, names)
	var sawShell, sawBwrap bool
	for _, n := range names {
		sawShell = sawShell || n == "bash"
		sawBwrap = sawBwrap || n == "bwrap"
	}
	if !sawShell || !sawBwrap {
		t.Fatalf("the sleeps do not run in a bash under bwrap under odin: %v", names)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	gone := time.Now().Add(10 * time.Second)
	for _, p := range pids {
		for pidRunning(p) && time.Now().Before(gone) {
			time.Sleep(20 * time.Millisecond)
		}
		if pidRunning(p) {
			t.Errorf("process %d (%s) outlived odin's SIGKILL", p, names[p])
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// findCmdline returns the pid of a process whose command line is exactly
// want (arguments joined by spaces), 0 if none.
func findCmdline(want string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") == want {
			return pid
		}
	}
	return 0
}

// ancestorsBelow returns pid and its ancestors up to, not including, top.
func ancestorsBelow(pid, top int) []int {
	var out []int
	for pid > 1 && pid != top {
		out = append(out, pid)
		pid = ppid(pid)
	}
	return out
}

func ppid(pid int) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func procName(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// pidRunning reports whether pid runs (a zombie does not).
func pidRunning(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	return i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
