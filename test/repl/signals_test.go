package repl

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// slowReply streams its first chunk and then one chunk every 2 s: the REPL
// is caught in the middle of a reply.
func slowReply() *llmtest.Script {
	return steps(llmtest.Step{When: "long story", Text: "The first words of a long reply" + strings.Repeat(" and more", 50),
		ChunkSize: 31, ChunkDelay: llmtest.Duration(2 * time.Second)})
}

// odinCmd runs an odin command in the REPL's project with its state.
func (tm *term) odinCmd(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command(odinBin, args...)
	cmd.Dir, cmd.Env = tm.Root, tm.cmd.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("odin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// exitCode is how odin ended, as a shell reports it.
func (tm *term) exitCode() int {
	tm.t.Helper()
	err := tm.Exited()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		tm.t.Fatal(err)
	}
	return 0
}

// shownSession is `odin sessions show` of the project's only session.
func (tm *term) shownSession() string {
	tm.t.Helper()
	list := strings.Split(strings.TrimSpace(tm.odinCmd("sessions")), "\n")
	if len(list) != 2 {
		tm.t.Fatalf("want one session, got:\n%s", strings.Join(list, "\n"))
	}
	return tm.odinCmd("sessions", "show", strings.Fields(list[1])[0])
}

// Closing the terminal (SIGHUP, as when an SSH connection drops) mid-reply
// cancels the turn, saves the session with the partial reply marked
// cancelled, and exits 129.
func TestTerminalClosedMidTurn(t *testing.T) {
	tm := start(t, slowReply(), options{})
	tm.Expect("edit ❯")
	tm.Type("long story" + enter)
	tm.Expect("The first words of a long reply")
	tm.pty.Close() // the kernel hangs up the session: SIGHUP
	if code := tm.exitCode(); code != 129 {
		t.Fatalf("exit %d, want 129 (SIGHUP)", code)
	}
	got := tm.shownSession()
	if !strings.Contains(got, "The first words of a long reply") || !strings.Contains(got, "_finished: cancelled_") {
		t.Errorf("the session does not keep the cancelled partial reply:\n%s", got)
	}
}

// SIGTERM ends the REPL the same way, with 143.
func TestSIGTERMEndsTheREPL(t *testing.T) {
	tm := start(t, slowReply(), options{})
	tm.Expect("edit ❯")
	tm.Type("long story" + enter)
	tm.Expect("The first words of a long reply")
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := tm.exitCode(); code != 143 {
		t.Fatalf("exit %d, want 143 (SIGTERM)", code)
	}
	got := tm.shownSession()
	if !strings.Contains(got, "The first words of a long reply") || !strings.Contains(got, "_finished: cancelled_") {
		t.Errorf("the session does not keep the cancelled partial reply:\n%s", got)
	}
}

// In line mode (stdin and stdout not a terminal) SIGTERM mid-turn also
// cancels, saves and exits 143.
func TestSIGTERMInLineMode(t *testing.T) {
	srv := llmtest.NewServer(t, slowReply())
	root, state := t.TempDir(), t.TempDir()
	cmd := exec.Command(odinBin)
	cmd.Dir = root
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state, "XDG_STATE_HOME=" + filepath.Join(state, "s"),
		"XDG_CONFIG_HOME=" + filepath.Join(state, "c"), "OPENAI_BASE_URL=" + srv.URL(), "OPENAI_API_KEY=test",
		"ODIN_MODELS_MAIN=scripted-model", "ODIN_MODELS_SMALL=scripted-model"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if _, err := io.WriteString(stdin, "long story\n"); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	// Line mode prints whole lines only: wait until the store has the
	// first words of the reply, then terminate.
	odin := func(args ...string) string {
		c := exec.Command(odinBin, args...)
		c.Dir, c.Env = root, cmd.Env
		b, _ := c.CombinedOutput()
		return string(b)
	}
	started := false
	for deadline := time.Now().Add(waitFor); time.Now().Before(deadline) && !started; time.Sleep(50 * time.Millisecond) {
		if lines := strings.Split(strings.TrimSpace(odin("sessions")), "\n"); len(lines) == 2 {
			started = strings.Contains(odin("sessions", "show", strings.Fields(lines[1])[0]), "The first words")
		}
	}
	if !started {
		t.Fatal("the reply never started")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("exit = %v, want 143", err)
	}
	lines := strings.Split(strings.TrimSpace(odin("sessions")), "\n")
	if got := odin("sessions", "show", strings.Fields(lines[1])[0]); !strings.Contains(got, "_finished: cancelled_") {
		t.Errorf("the cut reply is not marked cancelled:\n%s", got)
	}
}
