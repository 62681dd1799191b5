package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// TestRecordAndReplayTheDemo: the gated demo recorded with --record
// replays with no model server to the same answer, diff and gate
// verdicts; with one agent's prompt changed, the replay reports the first
// request that differs and exits 7.
func TestRecordAndReplayTheDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs go build/vet/test on the sample project")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(work, "project")
	fresh := func() {
		t.Helper()
		if err := os.RemoveAll(project); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(project, os.DirFS(filepath.Join(repo, "demo", "sample"))); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"state", "config"} {
			if err := os.RemoveAll(filepath.Join(work, d)); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := func(extra ...string) []string {
		return append(append(os.Environ(), "OPENAI_API_KEY=", "NO_COLOR=1", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local",
			"XDG_STATE_HOME="+filepath.Join(work, "state"), "XDG_CONFIG_HOME="+filepath.Join(work, "config")), extra...)
	}
	odinRun := func(env []string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "odin"), append([]string{"-C", project, "--model", "scripted-main", "--small-model", "scripted-small"}, args...)...)
		cmd.Env = env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if x := (*exec.ExitError)(nil); errors.As(err, &x) {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}

	fresh()
	script, err := llmtest.LoadScript(filepath.Join(repo, "demo", "script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := llmtest.Serve("127.0.0.1:0", script, llmtest.WithVars(map[string]string{"root": project}))
	if err != nil {
		t.Fatal(err)
	}
	tapeFile := filepath.Join(work, "demo.tape")
	recOut, recErr, code := odinRun(env("OPENAI_BASE_URL="+srv.URL()), "run", "--record", tapeFile, "add rate limiting to the API")
	srv.Close()
	if code != 0 {
		t.Fatalf("recording run exited %d\n%s\n%s", code, recOut, recErr)
	}
	modelCalls := len(srv.Requests())
	raw, err := os.ReadFile(tapeFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte(`"type":"exchange"`)); n != modelCalls {
		t.Errorf("the tape holds %d exchanges, the model server saw %d requests", n, modelCalls)
	}

	// Replay in a fresh copy at the same path; the server is gone.
	fresh()
	repOut, repErr, code := odinRun(env("OPENAI_BASE_URL=http://127.0.0.1:1/v1"), "replay", tapeFile)
	if code != 0 {
		t.Fatalf("replay exited %d\n%s\n%s", code, repOut, repErr)
	}
	for _, want := range []string{"every request matched the recording", "answer  same", "diff    same", "gates   same", "status  recorded done"} {
		if !strings.Contains(repErr, want) {
			t.Errorf("replay report lacks %q:\n%s", want, repErr)
		}
	}
	// What the user sees on stdout is the recording's, but for the usage
	// line's timings and the session id.
	noise := regexp.MustCompile(`(?m)^.*(session|elapsed|[0-9]+(\.[0-9]+)?(ms|s)\b).*$`)
	if a, b := noise.ReplaceAllString(recOut, ""), noise.ReplaceAllString(repOut, ""); a != b {
		t.Errorf("replayed output differs from the recording:\n--- recorded\n%s\n--- replayed\n%s", a, b)
	}

}

// TestReplayReportsDivergence: with the project's instructions changed
// after the recording, the replay still answers from the tape, names the
// first request that differs and where, and exits 7; a replay asking for
// more than the tape holds stops instead of inventing an answer.
func TestReplayReportsDivergence(t *testing.T) {
	env, root := acpEnv(t)
	writeFile(t, root, "main.go", "package main\n")
	srv, err := llmtest.Serve("127.0.0.1:0", llmtest.NewScript().Add("orchestrator",
		llmtest.Step{When: "what is in main.go", ToolCalls: []llmtest.ToolCall{llmtest.Call("ReadFile", map[string]any{"file_path": root + "/main.go"})}},
		llmtest.Step{When: "package main", Text: "A Go main package."},
	))
	if err != nil {
		t.Fatal(err)
	}
	tapeFile := filepath.Join(t.TempDir(), "ask.tape")
	run := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "odin"), args...)
		cmd.Env, cmd.Dir = env, root
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if x := (*exec.ExitError)(nil); errors.As(err, &x) {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	if out, errOut, code := run(append(env, "OPENAI_BASE_URL="+srv.URL(), "OPENAI_API_KEY=sk-test-secret-0123456789"), "run", "--mode", "ask", "--record", tapeFile, "what is in main.go?"); code != 0 {
		t.Fatalf("record: %d\n%s\n%s", code, out, errOut)
	}
	srv.Close()
	if raw, _ := os.ReadFile(tapeFile); bytes.Contains(raw, []byte("sk-test-secret-0123456789")) {
		t.Error("the API key is in the tape")
	}
	writeFile(t, root, "ODIN.md", "Answer in one word.\n")
	out, errOut, code := run(env, "replay", tapeFile)
	if code != 7 || !strings.Contains(out, "A Go main package.") {
		t.Errorf("diverging replay: exit %d, stdout %q", code, out)
	}
	if !regexp.MustCompile(`first divergence: orchestrator request 1 differs at messages\[0\]\.content \(from character [0-9]+\): recorded .*, now .*Project instructions`).MatchString(errOut) {
		t.Errorf("the divergence is not named:\n%s", errOut)
	}
	// A re-run that asks for more than the tape holds stops.
	writeFile(t, root, "ODIN.md", "")
	short := filepath.Join(t.TempDir(), "short.tape")
	raw, _ := os.ReadFile(tapeFile)
	lines := strings.SplitAfter(string(raw), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, `"seq":2,`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(short, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(env, "replay", short); code == 0 || !strings.Contains(errOut, "the recording has no response left") {
		t.Errorf("a replay beyond the tape: exit %d\n%s", code, errOut)
	}
}
