package repl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// odinBin is the odin binary built once by TestMain.
var odinBin string

func TestMain(m *testing.M) {
	// This binary doubles as the MCP server the elicitation test starts.
	if os.Getenv(askerEnv) == "1" {
		os.Exit(askerServer())
	}
	dir, err := os.MkdirTemp("", "odin-repl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	odinBin = filepath.Join(dir, "odin")
	build := exec.Command("go", "build", "-o", odinBin, "github.com/odin-code/odin/cmd/odin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building odin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitFor bounds every wait on the screen.
const waitFor = 20 * time.Second

// term is a running odin REPL in a pseudo-terminal.
type term struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	Root string
	Srv  *llmtest.Server
	// State is the state directory (sessions, history).
	State string

	mu      sync.Mutex
	raw     bytes.Buffer
	doneRaw int    // raw bytes up to the last newline already stripped
	done    string // their text without escape sequences
	pos     int    // Expect searches the text after this offset
	grew    chan struct{}
	closed  chan struct{}
	exit    chan error
}

type options struct {
	env  []string // extra environment
	args []string
	cols uint16
	// setup prepares the project directory before odin starts.
	setup func(root string)
	// root and state reuse an earlier run's project and state directories
	// (its sessions); empty ones are fresh.
	root, state string
}

// start runs odin in a fresh project against script, in which {{root}}
// is the project directory.
func start(t *testing.T, script *llmtest.Script, o options) *term {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o.root != "" {
		root = o.root
	}
	// Scripts name files as {{root}}/...
	srv := llmtest.NewServer(t, script, llmtest.WithVars(map[string]string{"root": root}))
	state := t.TempDir()
	if o.state != "" {
		state = o.state
	}
	if o.setup != nil {
		o.setup(root)
	}
	if o.cols == 0 {
		o.cols = 120
	}
	cmd := exec.Command(odinBin, o.args...)
	cmd.Dir = root
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + state,
		"XDG_STATE_HOME=" + filepath.Join(state, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"OPENAI_BASE_URL=" + srv.URL(),
		"OPENAI_API_KEY=test",
		"ODIN_MODELS_MAIN=scripted-model",
		"ODIN_MODELS_SMALL=scripted-model",
		"TERM=xterm-256color",
	}, o.env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: o.cols})
	if err != nil {
		t.Fatalf("starting odin in a pty: %v", err)
	}
	tm := &term{t: t, cmd: cmd, pty: f, Root: root, State: state, Srv: srv, grew: make(chan struct{}, 1),
		closed: make(chan struct{}), exit: make(chan error, 1)}
	go tm.read()
	go func() { tm.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-tm.exit:
		default:
			_ = cmd.Process.Kill()
			<-tm.exit
		}
		f.Close()
		<-tm.closed
		if t.Failed() {
			t.Logf("screen at the end:\n%s", tm.tail(4000))
		}
	})
	return tm
}

func (tm *term) read() {
	defer close(tm.closed)
	buf := make([]byte, 32<<10)
	for {
		n, err := tm.pty.Read(buf)
		if n > 0 {
			tm.answerQueries(buf[:n])
			tm.mu.Lock()
			tm.raw.Write(buf[:n])
			tm.mu.Unlock()
			select {
			case tm.grew <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// answerQueries answers what a real terminal answers: the background
// colour query and the cursor position report that termenv (through
// Bubble Tea's init) sends at start-up. Unanswered, it waits 5 s.
func (tm *term) answerQueries(b []byte) {
	if bytes.Contains(b, []byte("\x1b]11;?")) {
		_, _ = io.WriteString(tm.pty, "\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\")
	}
	if bytes.Contains(b, []byte("\x1b[6n")) {
		_, _ = io.WriteString(tm.pty, "\x1b[1;1R")
	}
}

// screen returns everything printed so far without escape sequences.
// Escape sequences never span a newline, so what precedes the last one is
// stripped once and kept: reading the screen stays cheap as it grows,
// which keeps the latency measurement honest.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	raw := tm.raw.Bytes()
	if k := bytes.LastIndexByte(raw[tm.doneRaw:], '\n'); k >= 0 {
		end := tm.doneRaw + k + 1
		tm.done += ansi.Strip(string(raw[tm.doneRaw:end]))
		tm.doneRaw = end
	}
	return tm.done + ansi.Strip(string(raw[tm.doneRaw:]))
}

func (tm *term) tail(n int) string {
	s := tm.screen()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// Type writes keys to the terminal.
func (tm *term) Type(keys string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, keys); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

// Expect waits until want appears after the previous match and moves past
// it; on timeout the test fails with the screen so far.
func (tm *term) Expect(want string) {
	tm.t.Helper()
	if _, ok := tm.wait(want, waitFor); !ok {
		tm.t.Fatalf("timed out after %s waiting for %q; screen so far:\n%s", waitFor, want, tm.tail(3000))
	}
}

// Idle waits until the turn before it has ended: the input's hint line
// goes back from the running "esc/ctrl+c cancel" to the idle one. An
// answer's text is streamed before its turn ends, so a command that is
// refused during a turn (/clear, /undo, /rewind, /resume, /compact) must
// wait for this, not for the answer.
func (tm *term) Idle() {
	tm.t.Helper()
	tm.Expect("shift+tab mode")
}

func (tm *term) wait(want string, d time.Duration) (time.Duration, bool) {
	start := time.Now()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s := tm.screen()
		tm.mu.Lock()
		pos := tm.pos
		tm.mu.Unlock()
		if pos > len(s) {
			pos = len(s)
		}
		if i := strings.Index(s[pos:], want); i >= 0 {
			tm.mu.Lock()
			tm.pos = pos + i + len(want)
			tm.mu.Unlock()
			return time.Since(start), true
		}
		select {
		case <-tm.grew:
		case <-deadline.C:
			return time.Since(start), false
		}
	}
}

// Exited waits for odin to exit and returns its error.
func (tm *term) Exited() error {
	tm.t.Helper()
	select {
	case err := <-tm.exit:
		tm.exit <- err
		return err
	case <-time.After(waitFor):
		tm.t.Fatalf("odin did not exit within %s; screen so far:\n%s", waitFor, tm.tail(3000))
		return nil
	}
}

// held waits until the scripted model holds a request at gate.
func (tm *term) held(gate string) {
	tm.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := tm.Srv.WaitHeld(ctx, gate); err != nil {
		tm.t.Fatalf("%v; screen so far:\n%s", err, tm.tail(3000))
	}
}

// Keys.
const (
	enter     = "\r"
	ctrlC     = "\x03"
	ctrlD     = "\x04"
	shiftTab  = "\x1b[Z"
	arrowDown = "\x1b[B"
)
