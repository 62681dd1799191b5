package e2e

import (
	"context"
	"errors"
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

// One writer per session: while a real odin run is held mid-turn, a second
// `odin run -c` on the same session is refused (exit 4, the holder's pid
// named) without sending anything to the model or writing to the session;
// after the first is killed with SIGKILL, a third one takes the session.
func TestSecondProcessOnLiveSessionRefused(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "first task", Text: "first answer", Hold: "first"},
		llmtest.Step{When: "second task", Text: "the second process answered"},
		llmtest.Step{When: "third task", Text: "the third process answered"},
	)
	srv := llmtest.NewServer(t, script)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=", "NO_COLOR=1",
		"XDG_STATE_HOME="+filepath.Join(work, ".state"), "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	odin := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "odin"), args...)
		cmd.Dir, cmd.Env = work, env
		return cmd
	}

	first := odin(t.Context(), "run", "first task")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Process.Kill(); _ = first.Wait() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := srv.WaitHeld(ctx, "first"); err != nil {
		t.Fatalf("the first run never reached the model: %v", err)
	}

	out, err := odin(t.Context(), "run", "-c", "second task").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("second process: err = %v, want exit 4\n%s", err, out)
	}
	if !strings.Contains(string(out), "in use by odin pid "+strconv.Itoa(first.Process.Pid)) {
		t.Errorf("the refusal does not name the holder (pid %d):\n%s", first.Process.Pid, out)
	}
	if n := len(srv.RequestsFor("orchestrator")); n != 1 {
		t.Errorf("the refused process reached the model: %d requests, want 1", n)
	}

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	out, err = odin(t.Context(), "run", "-c", "third task").CombinedOutput()
	if err != nil {
		t.Fatalf("after the holder was killed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "the third process answered") {
		t.Fatalf("third process output:\n%s", out)
	}
	reqs := srv.RequestsFor("orchestrator")
	var firstTask, secondTask bool
	for _, m := range reqs[len(reqs)-1].Body.LLMMessages() {
		firstTask = firstTask || strings.Contains(m.Content, "first task")
		secondTask = secondTask || strings.Contains(m.Content, "second task")
	}
	if !firstTask || secondTask {
		t.Errorf("the third run continued the wrong history: first task %v (want true), second task %v (want false)", firstTask, secondTask)
	}
}
