package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// longTail is the part of the reply odin is never given the time to
// receive: 15 more chunks, 2 s apart.
var longTail = strings.Repeat(" and more", 50)

// partialScript streams "The first words of a long reply" and the rest
// slowly: odin is caught mid-reply.
func partialScript() *llmtest.Script {
	return llmtest.NewScript().Add("orchestrator", llmtest.Step{
		Text:       "The first words of a long reply" + longTail,
		ChunkSize:  31,
		ChunkDelay: llmtest.Duration(2 * time.Second),
	})
}

// odinProc is an `odin run -o odin-stream` against a scripted model.
type odinProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	env     []string
	dir     string
	session string
	lines   chan map[string]any
	stderr  bytes.Buffer
}

func startRun(t *testing.T, script *llmtest.Script, task string) *odinProc {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(t, script)
	state := t.TempDir()
	p := &odinProc{t: t, dir: dir, lines: make(chan map[string]any, 1024)}
	p.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + state,
		"XDG_STATE_HOME=" + filepath.Join(state, "state"), "XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"OPENAI_BASE_URL=" + srv.URL(), "OPENAI_API_KEY=test", "NO_COLOR=1"}
	p.cmd = exec.Command(filepath.Join(binDir, "odin"), "run", "-o", "odin-stream", task)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = dir, p.env, &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				p.lines <- ev
			}
		}
	}()
	return p
}

// waitEvent waits for an odin-stream event of type typ.
func (p *odinProc) waitEvent(typ string) map[string]any {
	p.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("odin ended before a %s event; stderr:\n%s", typ, p.stderr.String())
			}
			if s, ok := ev["session"].(string); ok && s != "" {
				p.session = s
			}
			if ev["type"] == typ {
				return ev
			}
		case <-timeout:
			p.t.Fatalf("no %s event; stderr:\n%s", typ, p.stderr.String())
		}
	}
}

// show is `odin sessions show` of the run's session.
func (p *odinProc) show() string {
	p.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "odin"), "sessions", "show", p.session)
	cmd.Dir, cmd.Env = p.dir, p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("odin sessions show: %v\n%s", err, out)
	}
	return string(out)
}

// waitShown polls the store until the session shows want (the journal
// writes off the actors, a moment after the delta).
func (p *odinProc) waitShown(want string) string {
	p.t.Helper()
	var got string
	for range 200 {
		if got = p.show(); strings.Contains(got, want) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("the session never showed %q:\n%s", want, got)
	return ""
}

func (p *odinProc) exitCode() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		p.t.Fatalf("odin did not exit; stderr:\n%s", p.stderr.String())
		return -1
	}
}

// A reply is stored while it streams: kill -9 in the middle leaves the
// text received so far in the session, without a finish.
func TestStreamingReplySurvivesKill9(t *testing.T) {
	p := startRun(t, partialScript(), "tell me something long")
	p.waitEvent("text_delta")
	p.waitShown("The first words of a long reply")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit %d, want killed", code)
	}
	got := p.show()
	if !strings.Contains(got, "## Assistant") || !strings.Contains(got, "The first words of a long reply") {
		t.Errorf("the partial reply is not in the session:\n%s", got)
	}
	if strings.Contains(got, longTail) {
		t.Errorf("text that never streamed is in the session:\n%s", got)
	}
}

// Ctrl-C (SIGINT), SIGTERM and SIGHUP cancel the turn, keep the partial
// reply with a cancelled finish, and exit as shells report the signal.
func TestSignalsCancelSaveAndExit(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			p := startRun(t, partialScript(), "tell me something long")
			p.waitEvent("text_delta")
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			fin := p.waitEvent("turn_finished")
			if code := p.exitCode(); code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, p.stderr.String())
			}
			res, _ := fin["result"].(map[string]any)
			if res["status"] != "cancelled" {
				t.Errorf("turn status = %v, want cancelled", res["status"])
			}
			got := p.show()
			if !strings.Contains(got, "The first words of a long reply") || !strings.Contains(got, "_finished: cancelled_") {
				t.Errorf("the session does not keep the cancelled partial reply:\n%s", got)
			}
		})
	}
}
