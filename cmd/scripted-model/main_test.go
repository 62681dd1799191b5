package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// When this variable is set the test binary runs the command itself, so
// that signal handling is tested in a real process.
const runMainEnv = "SCRIPTED_MODEL_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		os.Args = append([]string{"scripted-model"}, strings.Fields(os.Getenv(runMainEnv))...)
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

const script = `
agents:
  default:
    - text: "hello from {{root}}"
`

func writeScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "demo.yaml")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// complete asks the served model for a non-streamed completion.
func complete(t *testing.T, base string) string {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Choices) != 1 {
		t.Fatalf("decoding completion: %v (%d choices)", err, len(body.Choices))
	}
	return body.Choices[0].Message.Content
}

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"--script", writeScript(t), "--var", "root=/tmp/demo", "-v"}, pw, &stderr)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Fatalf("first line = %q, want the base URL", line)
	}
	if got := complete(t, base); got != "hello from /tmp/demo" {
		t.Errorf("completion = %q", got)
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if code := <-done; code != 0 {
		t.Errorf("exit code = %d, want 0; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "default: step default[0]") {
		t.Errorf("-v must log requests; stderr:\n%s", stderr.String())
	}
}

func TestRunErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("steps: [{nonsense: 1}]"), 0o644); err != nil {
		t.Fatal(err)
	}
	undefined := filepath.Join(t.TempDir(), "undefined.yaml")
	if err := os.WriteFile(undefined, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no script", nil, 2, "--script is required"},
		{"stray argument", []string{"--script", bad, "extra"}, 2, "no arguments"},
		{"bad var", []string{"--script", bad, "--var", "novalue"}, 2, "novalue"},
		{"missing file", []string{"--script", filepath.Join(t.TempDir(), "none.yaml")}, 1, "none.yaml"},
		{"bad script", []string{"--script", bad}, 1, "nonsense"},
		{"undefined variable", []string{"--script", undefined}, 1, "root"},
		{"bad address", []string{"--script", undefined, "--var", "root=x", "--addr", "256.1.1.1:0"}, 1, "listen"},
		{"unknown flag", []string{"--nope"}, 2, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("code %d, stderr %q; want %d mentioning %q", code, stderr.String(), tt.code, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on failure", stdout.String())
			}
		})
	}
}

func TestSignalStopsCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), runMainEnv+"=--script "+writeScript(t)+" --var root=/r")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("reading URL: %v; stderr: %s", err, stderr.String())
			}
			if got := complete(t, strings.TrimSpace(line)); got != "hello from /r" {
				t.Errorf("completion = %q", got)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					t.Errorf("exit: %v; stderr: %s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the process did not exit after the signal")
			}
		})
	}
}
