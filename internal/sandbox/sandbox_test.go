package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary serve as the sandbox helper, as odin's main
// does.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

func TestConfinedWrites(t *testing.T) {
	st := Probe()
	if !st.Available {
		t.Skipf("cannot test confinement here: %s", st)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(base, "inside")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{inside, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(inside, "escape")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		script string
		ok     bool
	}{
		{"echo hi > inside/new.txt && mkdir inside/d && rm inside/new.txt", true},
		{"cat outside/keep.txt > /dev/null && ls outside", true}, // reads are not restricted
		{"echo hi > /dev/null", true},
		{"echo x > outside/new.txt", false},
		{"echo x >> outside/keep.txt", false},
		{": > outside/keep.txt", false},
		{"rm outside/keep.txt", false},
		{"mkdir outside/d", false},
		{"mv outside/keep.txt inside/", false},
		{"echo x > inside/escape/new.txt", false}, // through a symlink
		{"bash -c 'echo x > outside/child.txt'", false},
	}
	for _, c := range cases {
		cmd, got, err := Command(t.Context(), []string{inside}, "bash", "-c", c.script)
		if err != nil || !got.Available {
			t.Fatalf("Command: %v, %v", got, err)
		}
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v\n%s", c.script, err, c.ok, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(outside, "keep.txt"))
	if err != nil || string(data) != "original\n" {
		t.Fatalf("outside file changed: %q, %v", data, err)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside holds %d entries, want 1", len(entries))
	}
}

func TestHelperReportsFailure(t *testing.T) {
	if !Probe().Available {
		t.Skip("no Landlock")
	}
	cmd, _, err := Command(t.Context(), []string{t.TempDir()}, "/nonexistent/program")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 126 || !strings.Contains(string(out), "odin sandbox:") {
		t.Fatalf("err %v, output %q", err, out)
	}
}

func TestWritableDirs(t *testing.T) {
	root := t.TempDir()
	t.Setenv("GOMODCACHE", filepath.Join(root, "modcache-missing"))
	dirs := WritableDirs(root, filepath.Join(root, "missing"))
	real, _ := filepath.EvalSymlinks(root)
	if len(dirs) == 0 || dirs[0] != real {
		t.Fatalf("WritableDirs = %v, want the root first", dirs)
	}
	for _, d := range dirs {
		if strings.Contains(d, "missing") {
			t.Errorf("missing directory %s listed", d)
		}
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			t.Errorf("duplicate %s", d)
		}
		seen[d] = true
	}
}

func TestStatusString(t *testing.T) {
	if s := (Status{Available: true, ABI: 4}).String(); s != "landlock ABI 4" {
		t.Errorf("got %q", s)
	}
	if s := (Status{Reason: "old kernel"}).String(); s != "no sandbox: old kernel" {
		t.Errorf("got %q", s)
	}
}
