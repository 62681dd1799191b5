package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository whose configuration and hooks would run code:
// an fsmonitor program and a pre-commit hook that each leave a marker file.
func gitRepo(t *testing.T) (dir, marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir = t.TempDir()
	marker = filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, "git", "init", "-q")
	run(t, dir, nil, "git", "config", "core.fsmonitor", script)
	if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\necho hook >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, marker
}

// run runs a command with a clean git identity and no user configuration.
func run(t *testing.T, dir string, extraEnv []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGitRefusesImplicitBareRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	project := t.TempDir()
	bare := filepath.Join(project, "vendor", "evil.git")
	if out, err := run(t, project, nil, "git", "init", "-q", "--bare", bare); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for name, env := range map[string][]string{"CommandGitEnv": CommandGitEnv()} {
		out, err := run(t, bare, env, "git", "rev-parse", "--git-dir")
		if err == nil || !strings.Contains(out, "bare") {
			t.Errorf("%s: git used an implicit bare repository: %v\n%s", name, err, out)
		}
	}
	if out, err := run(t, bare, nil, "git", "rev-parse", "--git-dir"); err != nil {
		t.Fatalf("control: plain git refused the bare repository: %v\n%s", err, out)
	}
}

func TestCommandGitEnvKeepsHooksButNotFsmonitor(t *testing.T) {
	dir, marker := gitRepo(t)
	run(t, dir, CommandGitEnv(), "git", "status")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("fsmonitor ran under CommandGitEnv")
	}
	run(t, dir, CommandGitEnv(), "git", "add", "a.txt")
	if out, err := run(t, dir, CommandGitEnv(), "git", "commit", "-q", "-m", "x"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, _ := os.ReadFile(marker)
	if !strings.Contains(string(data), "hook") {
		t.Fatalf("the user's pre-commit hook did not run for a commit: %q", data)
	}
}
