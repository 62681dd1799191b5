package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHandoffKeepsTheSandbox: a command handed off to another program (an
// editor's terminal), started by it in its own environment, still runs in
// the sandbox with Odin's filtered environment: its write outside the
// project fails (no canary) and the starting program's secret never
// reaches it. The file is good for one start only.
func TestHandoffKeepsTheSandbox(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap is unusable here: " + why)
	}
	pr := newProject(t)
	l := pr.launcher(ModeBubblewrap, []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "MY_PROVIDER=sk-provider"})
	if !l.CanHandoff() {
		t.Fatal("a bubblewrap launcher cannot hand off")
	}
	canary := filepath.Join(pr.outside, "canary")
	script := "echo inside > inside.txt; echo escaped > " + canary + "; env; echo ran"
	p, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", script}, Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	argv, remove, err := p.Handoff(filepath.Join(pr.state, "handoff"))
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	fi, err := os.Stat(argv[len(argv)-1])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("handoff file: %v, %v; want mode 0600", fi, err)
	}
	// The editor's process, with a secret of its own in its environment.
	start := func() (string, error) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "EDITOR_SECRET=editor-secret-value")
		cmd.Dir = "/"
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := start()
	if err != nil || !strings.Contains(out, "ran") {
		t.Fatalf("handed-off command: %v\n%s", err, out)
	}
	for _, secret := range []string{"editor-secret-value", "sk-provider"} {
		if strings.Contains(out, secret) {
			t.Errorf("the command saw %q:\n%s", secret, out)
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("the handed-off command wrote outside the project: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(pr.root, "inside.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("the write inside the project: %q, %v", b, err)
	}
	if out, err := start(); err == nil {
		t.Errorf("the handoff file started a second command:\n%s", out)
	}
}

// TestHandoffKilledTakesItsNamespace: the program that started a handed-off
// command stops it with a signal (ACP terminal/kill): nothing of the
// command is left.
func TestHandoffKilledTakesItsNamespace(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap is unusable here: " + why)
	}
	pr := newProject(t)
	l := pr.launcher(ModeBubblewrap, []string{"PATH=" + os.Getenv("PATH")})
	marker := "3" + strings.TrimLeft(time.Now().Format(".000000"), ".")
	p, err := l.Command(t.Context(), Spec{Args: []string{"bash", "-c", "sleep " + marker + " & setsid sleep " + marker + " & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	argv, remove, err := p.Handoff(filepath.Join(pr.state, "handoff"))
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(sleepers(marker)) < 2; i++ {
		if i > 500 {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	for i := 0; len(sleepers(marker)) > 0; i++ {
		if i > 500 {
			t.Fatalf("sleep %s outlived the terminal's kill: %v", marker, sleepers(marker))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
