package cluster

import (
	"bytes"
	"context"
	"io"
	"net/http"
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

// TestAttachToASessionOnAWorker: odin attach, in a pseudo-terminal,
// reaches a session that a worker hosts through odin serve
// --host-sessions=false: the answer streams, an approval asked on the
// worker is answered from the attached REPL (the command runs once, on
// the worker), and /detach leaves the session to the cluster.
func TestAttachToASessionOnAWorker(t *testing.T) {
	longCluster(t)
	if testing.Short() {
		t.Skip("starts two odin processes")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not installed: commands cannot run sandboxed")
	}
	script := llmtest.NewScript()
	script.Add("orchestrator",
		llmtest.Step{When: "say hello", Text: "hello from the worker", ChunkSize: 3},
		llmtest.Step{When: "approve me", ToolCalls: []llmtest.ToolCall{llmtest.Call("ExecuteCommand", map[string]any{"command": "rm keep.txt"})}},
		llmtest.Step{When: "Exit code", Text: "removed on the worker"},
	)
	f := newFleet(t, script, "")
	keep := filepath.Join(f.project, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := f.worker("worker-1")
	fr := f.front()
	code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create session: %d %v %v", code, s, err)
	}
	id := s["id"].(string)

	cmd := exec.Command(filepath.Join(binDir, "odin"), "attach", id[:8], "--server", fr.base)
	cmd.Dir = f.project
	cmd.Env = append(append([]string(nil), f.env...), "TERM=xterm-256color", "ODIN_SERVE_TOKEN="+fr.token)
	tm := startPTY(t, cmd)
	tm.expect("edit ❯")
	tm.typ("say hello\r")
	tm.expect("hello from the worker")
	tm.typ("approve me\r")
	tm.expect("approval needed: orchestrator asks to run ExecuteCommand")
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the command ran before it was approved: %v", err)
	}
	tm.typ("1\r")
	tm.expect("removed on the worker")
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Errorf("the approved command did not run: %v", err)
	}
	if n := len(f.model.RequestsFor("orchestrator")); n != 3 {
		t.Errorf("%d model requests, want 3 (hello, the call, its result once)", n)
	}
	tm.typ("/detach\r")
	if err := tm.wait(); err != nil {
		t.Fatalf("attach: %v\n%s", err, tm.text())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if c := f.owners(ctx, []string{id})[id]; c.Owner != w.member {
		t.Errorf("the session is owned by %q, want the worker %q", c.Owner, w.member)
	}
}

// ptyProc is a child process in a pseudo-terminal.
type ptyProc struct {
	t    *testing.T
	f    *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	pos  int
	done chan error
}

func startPTY(t *testing.T, cmd *exec.Cmd) *ptyProc {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyProc{t: t, f: f, cmd: cmd, done: make(chan error, 1)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				// What a terminal answers at start-up (Bubble Tea asks).
				if bytes.Contains(buf[:n], []byte("\x1b]11;?")) {
					_, _ = io.WriteString(f, "\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\")
				}
				if bytes.Contains(buf[:n], []byte("\x1b[6n")) {
					_, _ = io.WriteString(f, "\x1b[1;1R")
				}
				p.mu.Lock()
				p.raw.Write(buf[:n])
				p.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case err := <-p.done:
			p.done <- err
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		f.Close()
		<-read
		if t.Failed() {
			t.Logf("attach's terminal:\n%s", p.text())
		}
	})
	return p
}

func (p *ptyProc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ansi.Strip(p.raw.String())
}

func (p *ptyProc) typ(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.f, s); err != nil {
		p.t.Fatal(err)
	}
}

// expect waits for want after the previous match.
func (p *ptyProc) expect(want string) {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		s := p.text()
		if i := strings.Index(s[min(p.pos, len(s)):], want); i >= 0 {
			p.pos += i + len(want)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("no %q on attach's terminal:\n%s", want, p.text())
}

func (p *ptyProc) wait() error {
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(30 * time.Second):
		p.t.Fatal("attach did not exit")
		return nil
	}
}
