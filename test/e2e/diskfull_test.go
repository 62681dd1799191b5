package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// mountTmpfs mounts a tmpfs of size at dir for the test, or skips when it
// cannot (not root, no mount permission).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
}

// fill writes into dir until the filesystem is full and returns the file.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	// Whatever a smaller write can still take.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return path
}

type odinEnv struct {
	work string
	env  []string
}

func (o odinEnv) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
	cmd.Dir, cmd.Env = o.work, o.env
	return cmd
}

func newOdinEnv(t *testing.T, srv *llmtest.Server, state string) odinEnv {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return odinEnv{work: work, env: append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The state directory fills up while a turn runs: the answer is still
// printed, the run says the session could not be saved and exits 5 (not 0,
// as it used to, with errors only in the log), and once space is freed,
// `odin run -c` continues a consistent history: the turn's writes stopped
// at the failure, in order, so no tool call is separated from its result.
func TestDiskFullDuringTurn(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	mountTmpfs(t, state, "4m")
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first task", Text: "first answer"},
		llmtest.Step{When: "second task", Hold: "second", ToolCalls: []llmtest.ToolCall{llmtest.Call("LS", map[string]any{"path": "."})}},
		llmtest.Step{Text: "second answer, after listing"},
		llmtest.Step{When: "third task", Text: "third answer"},
	)
	srv := llmtest.NewServer(t, script)
	o := newOdinEnv(t, srv, state)

	if out, err := o.cmd(t.Context(), "run", "first task").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}

	second := o.cmd(t.Context(), "run", "-c", "second task")
	var out strings.Builder
	second.Stdout, second.Stderr = &out, &out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := srv.WaitHeld(ctx, "second"); err != nil {
		t.Fatalf("second run never reached the model: %v\n%s", err, out.String())
	}
	filler := fill(t, state)
	srv.Release("second")
	err := second.Wait()
	t.Logf("second run output:\n%s", out.String())
	if code := exitCode(err); code != 5 {
		t.Fatalf("second run (disk full): exit %d, want 5\n%s", code, out.String())
	}
	for _, want := range []string{"second answer, after listing", "could not be saved", "odin doctor"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("second run output lacks %q:\n%s", want, out.String())
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	third, err := o.cmd(t.Context(), "run", "-c", "third task").CombinedOutput()
	if err != nil {
		t.Fatalf("third run after freeing space: %v\n%s", err, third)
	}
	if !strings.Contains(string(third), "third answer") {
		t.Fatalf("third run:\n%s", third)
	}
	reqs := srv.RequestsFor("orchestrator")
	msgs := reqs[len(reqs)-1].Body.LLMMessages()
	calls, results := map[string]bool{}, map[string]bool{}
	var firstSeen bool
	for _, m := range msgs {
		firstSeen = firstSeen || userWords(m.Content) == "first task"
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == llm.RoleTool {
			results[m.ToolCallID] = true
		}
	}
	if !firstSeen {
		t.Errorf("the continued history lost the first turn: %+v", msgs)
	}
	for id := range calls {
		if !results[id] {
			t.Errorf("tool call %s has no result in the continued history: %+v", id, msgs)
		}
	}
}

// A read-only state directory: a clear message, exit 1 (not the usage
// error 2), and the hint to run `odin doctor`.
func TestReadOnlyDatabase(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	mountTmpfs(t, state, "4m")
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("orchestrator", llmtest.Reply("first answer"), llmtest.Reply("never sent")))
	o := newOdinEnv(t, srv, state)
	if out, err := o.cmd(t.Context(), "run", "first task").CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", state).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	out, err := o.cmd(t.Context(), "run", "-c", "second task").CombinedOutput()
	if code := exitCode(err); code != 1 {
		t.Fatalf("read-only database: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(string(out), "odin doctor") || strings.Contains(string(out), "panic") {
		t.Errorf("output lacks the doctor hint or panicked:\n%s", out)
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("%d model requests, want 1: a run that cannot save must not start", n)
	}
}
