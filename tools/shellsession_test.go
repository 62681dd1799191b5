package tools

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/tools/tool"
)

// bwrapLauncher is a bubblewrap launcher for root, or a skip.
func bwrapLauncher(t *testing.T, root string) *sandbox.Launcher {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the session tools' sandbox tests need bubblewrap")
	}
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: root})
	if st := l.Status(); st.Refuse {
		t.Skipf("bubblewrap is unusable here: %s", st)
	}
	return l
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// confinedShell is a ShellSession run by l in root, with a one-second
// kill grace, and the env of Code's calls to it; its sessions close when
// t ends.
func confinedShell(t *testing.T, l *sandbox.Launcher, root string) (tool.Tool, *tool.Env) {
	t.Helper()
	sessions := NewSessions()
	t.Cleanup(sessions.Close)
	tl := NewShellSession(ExecuteCommandOptions{Launcher: l, KillGrace: time.Second}, sessions)
	return tl, &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1"}
}

func shellCall(t *testing.T, tl tool.Tool, env *tool.Env, in map[string]any) (tool.Result, ShellOutcome) {
	t.Helper()
	res, err := tl.Run(t.Context(), env, mustJSON(t, in))
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := res.Meta.(ShellOutcome)
	return res, oc
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestShellSessionKeepsState: cd, export and an activated venv made in one
// call are there in the next; a background http.server started in one
// call answers in the next, is listed as a job, and is gone with the run.
func TestShellSessionKeepsState(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	sessions := NewSessions()
	defer sessions.Close()
	tl := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
	done := make(chan struct{})
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1", Done: done}

	res, oc := shellCall(t, tl, env, map[string]any{"command": "cd sub && export ODIN_MARK=kept-42 && python3 -m venv --without-pip .venv && . .venv/bin/activate && echo ready"})
	if oc.ExitCode != 0 || !strings.Contains(res.Output, "ready") {
		t.Fatalf("first call failed:\n%s", res.Output)
	}
	if oc.Cwd != filepath.Join(root, "sub") {
		t.Errorf("cwd after cd = %q, want %q", oc.Cwd, filepath.Join(root, "sub"))
	}
	res, oc = shellCall(t, tl, env, map[string]any{"command": `pwd; echo "mark=$ODIN_MARK"; echo "venv=$VIRTUAL_ENV"; command -v python`})
	for _, want := range []string{filepath.Join(root, "sub") + "\n", "mark=kept-42", "venv=" + filepath.Join(root, "sub", ".venv"), filepath.Join(root, "sub", ".venv", "bin", "python")} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("second call lost %q:\n%s", want, res.Output)
		}
	}

	port := freePort(t)
	res, oc = shellCall(t, tl, env, map[string]any{"command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 >/tmp/srv.log 2>&1 & echo started $!", port)})
	if oc.ExitCode != 0 {
		t.Fatalf("starting the server failed:\n%s", res.Output)
	}
	res, oc = shellCall(t, tl, env, map[string]any{"command": fmt.Sprintf(`for i in $(seq 50); do python3 -c 'import urllib.request,sys; print(urllib.request.urlopen("http://127.0.0.1:%d/").status)' 2>/dev/null && break; sleep 0.1; done`, port)})
	if !strings.Contains(res.Output, "200") {
		t.Errorf("the background server did not answer in the next call:\n%s", res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"action": "jobs"})
	if !strings.Contains(res.Output, "http.server") || !strings.Contains(res.Output, "[1]") {
		t.Errorf("jobs does not list the server:\n%s", res.Output)
	}
	pid := sandboxedPid(t, "http.server", strconv.Itoa(port))
	if pid == 0 {
		t.Fatalf("no http.server process seen from the host")
	}
	close(done) // the run ends
	waitDead(t, pid)
}

// sandboxedPid finds, from the host, the process whose command line holds
// every one of words, waiting a few seconds for it to appear.
func sandboxedPid(t *testing.T, words ...string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if pid := hostPid(words...); pid != 0 {
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0
}

// hostPid is the live process whose command line holds every one of
// words, 0 when there is none now.
func hostPid(words ...string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !processAlive(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		all := true
		for _, w := range words {
			all = all && strings.Contains(cl, w)
		}
		if all {
			return pid
		}
	}
	return 0
}

// waitDead fails unless pid is gone (or a zombie) within a few seconds.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !processAlive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	t.Errorf("process %d (%s) outlived its run", pid, strings.ReplaceAll(string(b), "\x00", " "))
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func processAlive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// landlockLauncher is a Landlock-fallback launcher for root, or a skip.
func landlockLauncher(t *testing.T, root string) *sandbox.Launcher {
	t.Helper()
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeLandlock, Root: root})
	if st := l.Status(); st.Refuse {
		t.Skipf("Landlock is unavailable here: %s", st)
	}
	return l
}

// TestShellSessionTimeout: a foreground command past its timeout is
// interrupted, all of its processes (a pipeline, a subshell's child); the
// shell, its state and its background job survive; action kill stops a
// job with everything it started. Under both sandboxes: Odin, not the
// shell, finds the processes (the Landlock fallback shows the shell no
// /proc/PID).
func TestShellSessionTimeout(t *testing.T) {
	for name, launcher := range map[string]func(*testing.T, string) *sandbox.Launcher{"bwrap": bwrapLauncher, "landlock": landlockLauncher} {
		t.Run(name, func(t *testing.T) {
			root := realTemp(t)
			l := launcher(t, root)
			tl, env := confinedShell(t, l, root)
			shellCall(t, tl, env, map[string]any{"command": "export KEEP=yes; bash -c 'sleep 304.5 & sleep 305.5; :' & echo bg"})
			// The pipeline's tail survives SIGINT and stops only at
			// SIGKILL, after the grace.
			res, oc := shellCall(t, tl, env, map[string]any{"command": "echo before; sleep 306.5 | bash -c 'trap \"echo got-int\" INT; while :; do sleep 307.5; done'; echo after", "timeout": 1000})
			if !oc.TimedOut || !res.IsError {
				t.Fatalf("no timeout reported:\n%s", res.Output)
			}
			if !strings.Contains(res.Output, "before") || !strings.Contains(res.Output, "got-int") || !strings.Contains(res.Output, "after") {
				t.Errorf("output lost, or the shell did not go on after the interrupted pipeline:\n%s", res.Output)
			}
			for _, fg := range []string{"sleep 306.5", "sleep 307.5"} {
				if pid := hostPid(fg); pid != 0 {
					waitDead(t, pid)
				}
			}
			job, jobChild := sandboxedPid(t, "sleep 305.5"), sandboxedPid(t, "sleep 304.5")
			if job == 0 || jobChild == 0 {
				t.Fatal("the timeout killed the background job")
			}
			res, oc = shellCall(t, tl, env, map[string]any{"command": "echo keep=$KEEP; jobs"})
			if oc.Restarted || !strings.Contains(res.Output, "keep=yes") || !strings.Contains(res.Output, "sleep 305.5") {
				t.Errorf("the shell or its background job did not survive the timeout:\n%s", res.Output)
			}
			res, _ = shellCall(t, tl, env, map[string]any{"action": "kill", "job": 2})
			if !strings.Contains(res.Output, "no background job %2") {
				t.Errorf("kill of a job that does not exist:\n%s", res.Output)
			}
			res, _ = shellCall(t, tl, env, map[string]any{"action": "kill", "job": 1})
			if !strings.Contains(res.Output, "killed job %1") {
				t.Errorf("kill did not kill the job:\n%s", res.Output)
			}
			waitDead(t, job)
			waitDead(t, jobChild)
			res, _ = shellCall(t, tl, env, map[string]any{"command": "jobs; echo end"})
			if strings.Contains(res.Output, "Running") || !strings.Contains(res.Output, "end") {
				t.Errorf("the killed job still runs:\n%s", res.Output)
			}
			res, oc = shellCall(t, tl, env, map[string]any{"action": "restart"})
			if !oc.Restarted {
				t.Errorf("restart did not restart:\n%s", res.Output)
			}
			res, _ = shellCall(t, tl, env, map[string]any{"command": "echo keep=$KEEP"})
			if strings.Contains(res.Output, "keep=yes") {
				t.Errorf("a restarted shell kept the old variables:\n%s", res.Output)
			}
		})
	}
}

// TestShellSessionExitAndQuoting: any bytes of a command reach bash
// intact, output without a newline is kept, and an exit ends the shell
// without hanging the call.
func TestShellSessionExitAndQuoting(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	sessions := NewSessions()
	defer sessions.Close()
	tl := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1"}
	res, oc := shellCall(t, tl, env, map[string]any{"command": "printf '%s|' \"it's\" 'a\\b' \"é\n\"; printf nonl; false"})
	if !strings.Contains(res.Output, "it's|a\\b|é\n|nonl") || oc.ExitCode != 1 {
		t.Errorf("quoting or exit status wrong (exit %d):\n%s", oc.ExitCode, res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"command": "cat; read x; echo read=$?"})
	if !strings.Contains(res.Output, "read=1") {
		t.Errorf("a command read the request pipe:\n%s", res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"command": "exit 3"})
	if !res.IsError || !strings.Contains(res.Output, "exited") {
		t.Errorf("exit not reported:\n%s", res.Output)
	}
	res, oc = shellCall(t, tl, env, map[string]any{"command": "echo again"})
	if !oc.Restarted || !strings.Contains(res.Output, "again") {
		t.Errorf("no fresh shell after exit:\n%s", res.Output)
	}
}

// TestShellSessionLandlock: the session protocol works under the Landlock
// fallback too (Odin's init helper between the launcher and bash), and a
// write outside the project is refused there as well.
func TestShellSessionLandlock(t *testing.T) {
	root := realTemp(t)
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeLandlock, Root: root})
	if st := l.Status(); st.Refuse {
		t.Skipf("Landlock is unavailable here: %s", st)
	}
	outside, err := os.MkdirTemp("/var/tmp", "odin-shell-canary-")
	if err != nil {
		t.Skip("no /var/tmp for the canary")
	}
	defer os.RemoveAll(outside)
	sessions := NewSessions()
	defer sessions.Close()
	tl := NewShellSession(ExecuteCommandOptions{Launcher: l, KillGrace: time.Second}, sessions)
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1"}
	shellCall(t, tl, env, map[string]any{"command": "mkdir -p sub; sleep 301.5 & cd sub; export K=v1"})
	res, oc := shellCall(t, tl, env, map[string]any{"command": "echo k=$K; touch in " + outside + "/canary; sleep 30", "timeout": 1000})
	if !oc.TimedOut || oc.Cwd != filepath.Join(root, "sub") || !strings.Contains(res.Output, "k=v1") {
		t.Errorf("timeout %v cwd %q:\n%s", oc.TimedOut, oc.Cwd, res.Output)
	}
	if !exists(filepath.Join(root, "sub", "in")) || exists(filepath.Join(outside, "canary")) {
		t.Errorf("Landlock confinement wrong:\n%s", res.Output)
	}
	res, _ = shellCall(t, tl, env, map[string]any{"action": "jobs"})
	if !strings.Contains(res.Output, "sleep 301.5") {
		t.Errorf("the background job did not survive the timeout:\n%s", res.Output)
	}
	pid := sandboxedPid(t, "sleep 301.5")
	if pid == 0 {
		t.Fatal("the background sleep is not visible from the host")
	}
	sessions.Close()
	waitDead(t, pid)
}

// TestSessionsDialLoopback (issue 36): a server a run's shell started in
// the background is reached by Odin through the shell's sandbox, not on
// the host's loopback; another run, a port nothing listens on and a run
// without a shell get web.ErrNoLoopback; after the run ends, nothing.
func TestSessionsDialLoopback(t *testing.T) {
	root := realTemp(t)
	l := bwrapLauncher(t, root)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("relayed-7c1f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sessions := NewSessions()
	defer sessions.Close()
	tl := NewShellSession(ExecuteCommandOptions{Launcher: l}, sessions)
	done := make(chan struct{})
	env := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t1", SessionID: "s1", Done: done}
	port := freePort(t)
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	if _, err := sessions.DialLoopback(t.Context(), runKey(env), addr); !errors.Is(err, web.ErrNoLoopback) {
		t.Errorf("DialLoopback before the run has a shell: %v, want ErrNoLoopback", err)
	}
	res, oc := shellCall(t, tl, env, map[string]any{"command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 >/dev/null 2>&1 &", port)})
	if oc.ExitCode != 0 {
		t.Fatalf("starting the server failed:\n%s", res.Output)
	}
	get := func(key string) (string, error) {
		c, err := sessions.DialLoopback(t.Context(), key, addr)
		if err != nil {
			return "", err
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /hello.txt HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
		b, err := io.ReadAll(c)
		return string(b), err
	}
	var body string
	var err error
	for range 100 {
		if body, err = get(runKey(env)); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || !strings.Contains(body, "relayed-7c1f") {
		t.Fatalf("GET through the shell's sandbox: %v\n%s", err, body)
	}
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		c.Close()
		t.Errorf("the shell's server is listening on the host's loopback too")
	}
	other := &tool.Env{Root: root, Mode: "edit", Agent: "code", AgentID: "t2", SessionID: "s1"}
	if _, err := get(runKey(other)); !errors.Is(err, web.ErrNoLoopback) {
		t.Errorf("another run reached the shell's server: %v", err)
	}
	free := netip.AddrPortFrom(addr.Addr(), uint16(freePort(t)))
	if _, err := sessions.DialLoopback(t.Context(), runKey(env), free); !errors.Is(err, web.ErrNoLoopback) {
		t.Errorf("DialLoopback to a port nothing listens on: %v, want ErrNoLoopback", err)
	}
	close(done)
	for range 100 {
		if _, err = get(runKey(env)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !errors.Is(err, web.ErrNoLoopback) {
		t.Errorf("DialLoopback after the run ended: %v, want ErrNoLoopback", err)
	}
}
