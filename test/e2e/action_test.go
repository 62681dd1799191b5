package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestActionScript runs the GitHub Action's run step (scripts/ci-action.sh,
// which action.yml calls) as the Action does, against the scripted model:
// the report holds the answer, the outputs are set, and the exit code is
// odin run's, so a failed turn fails the job.
func TestActionScript(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed: skipping the Action script's test (GitHub's runners have it)")
	}
	script, err := filepath.Abs("../../scripts/ci-action.sh")
	if err != nil {
		t.Fatal(err)
	}
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "describe main.go", Text: "A Go main package | with a pipe."},
		llmtest.Step{When: "fail please", Status: 400},
	))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	run := func(task string) (int, string, string) {
		t.Helper()
		report, outputs := filepath.Join(dir, "report.md"), filepath.Join(dir, "outputs")
		os.Remove(report)
		os.Remove(outputs)
		taskFile := filepath.Join(dir, "task.txt")
		if err := os.WriteFile(taskFile, []byte(task), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", script)
		cmd.Dir = root
		cmd.Env = append(env, "OPENAI_BASE_URL="+srv.URL(), "ODIN="+filepath.Join(binDir, "odin"), "ODIN_TASK_FILE="+taskFile,
			"ODIN_ARGS=--mode ask", "ODIN_REPORT="+report, "GITHUB_OUTPUT="+outputs, "ODIN_PROVIDERS_OPENAI_MAX_RETRIES=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if x := (*exec.ExitError)(nil); errors.As(err, &x) {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		rep, _ := os.ReadFile(report)
		out, _ := os.ReadFile(outputs)
		return code, string(rep), string(out) + stderr.String()
	}
	code, report, outputs := run("describe main.go")
	if code != 0 || !strings.Contains(report, "### Odin: done") || !strings.Contains(report, "A Go main package | with a pipe.") {
		t.Errorf("done: exit %d\n%s\n%s", code, report, outputs)
	}
	if !strings.Contains(outputs, "exit-code=0") || !strings.Contains(outputs, "status=done") || !strings.Contains(outputs, "session-id=") {
		t.Errorf("outputs: %s", outputs)
	}
	code, report, outputs = run("fail please")
	if code != 1 || !strings.Contains(report, "### Odin: failed") || !strings.Contains(outputs, "exit-code=1") {
		t.Errorf("failed turn: exit %d\n%s\n%s", code, report, outputs)
	}
}
