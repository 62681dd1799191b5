package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLS(t *testing.T) {
	env := newRootEnv(t)
	r := env.Root
	writeTestFile(t, r, "b.txt", strings.Repeat("x", 2048))
	writeTestFile(t, r, "a.go", "package a\n")
	writeTestFile(t, r, "z/inner.txt", "x")
	writeTestFile(t, r, "m/x", "x")
	writeTestFile(t, r, ".env", "A=1\n")
	writeTestFile(t, r, "debug.log", "x")
	writeTestFile(t, r, ".git/HEAD", "x")
	if err := os.Symlink("a.go", filepath.Join(r, "link.go")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"dirs first then files with sizes", map[string]any{"path": r},
			r + "/ (2 directories, 5 files)\n  m/\n  z/\n  .env (4 B)\n  a.go (10 B)\n  b.txt (2.0 KB)\n  debug.log (1 B)\n  link.go -> a.go\n"},
		{"ignore globs by name and path", map[string]any{"path": r, "ignore": []string{"*.log", r + "/z", ".*"}},
			r + "/ (1 directory, 3 files)\n  m/\n  a.go (10 B)\n  b.txt (2.0 KB)\n  link.go -> a.go\n"},
		{"path with .. is cleaned", map[string]any{"path": filepath.Join(r, "m", "..", "z")},
			r + "/z/ (0 directories, 1 file)\n  inner.txt (1 B)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, NewLS(), env, tc.in)
			if res.IsError {
				t.Fatal(res.Output)
			}
			if diff := cmp.Diff(tc.want, res.Output); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	empty := filepath.Join(r, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	res := runTool(t, NewLS(), env, map[string]any{"path": empty})
	if want := empty + "/ (0 directories, 0 files)\n(empty directory)\n"; res.Output != want {
		t.Errorf("empty dir: got %q want %q", res.Output, want)
	}
}

func TestLSErrors(t *testing.T) {
	env := newRootEnv(t)
	file := writeTestFile(t, env.Root, "a.go", "package a\n")
	tests := []struct {
		name   string
		in     map[string]any
		want   string
		denied bool
	}{
		{"relative path", map[string]any{"path": "src"}, "must be an absolute path", false},
		{"empty path", map[string]any{"path": ""}, "required", false},
		{"file", map[string]any{"path": file}, "is a file (10 bytes), not a directory", false},
		{"missing", map[string]any{"path": env.Root + "/nope"}, "does not exist", false},
		{"outside", map[string]any{"path": t.TempDir()}, "outside the project", true},
		{"bad ignore glob", map[string]any{"path": env.Root, "ignore": []string{"[x"}}, "invalid ignore pattern", false},
		{"ignore not an array", map[string]any{"path": env.Root, "ignore": "*.log"}, "invalid input", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := runTool(t, NewLS(), env, tc.in)
			if !res.IsError || !strings.Contains(res.Output, tc.want) || res.Denied != tc.denied {
				t.Errorf("got IsError=%v Denied=%v %q, want an error containing %q", res.IsError, res.Denied, res.Output, tc.want)
			}
		})
	}
}

func TestLSCap(t *testing.T) {
	env := newRootEnv(t)
	for i := range lsLimit + 3 {
		writeTestFile(t, env.Root, fmt.Sprintf("f%04d", i), "")
	}
	res := runTool(t, NewLS(), env, map[string]any{"path": env.Root})
	if !strings.HasSuffix(res.Output, "[3 more entries not shown; use Glob or pass ignore patterns to narrow the listing]\n") {
		t.Errorf("no cap note: ...%q", res.Output[len(res.Output)-120:])
	}
	if n := strings.Count(res.Output, "\n  f"); n != lsLimit {
		t.Errorf("listed %d entries, want %d", n, lsLimit)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KB", 1536: "1.5 KB", 5 << 20: "5.0 MB", 3 << 30: "3.0 GB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
