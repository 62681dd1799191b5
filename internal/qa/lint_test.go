package qa

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/sandbox"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Lint on Go files formats them with gofmt (really rewriting them) and
// vets their packages; a vet finding makes the pass unclean.
func TestLintGo(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Skip("gofmt not installed")
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"go.mod":    "module hello\n\ngo 1.22\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main()  {\nfmt.Printf(\"%d\\n\", \"x\")\n}\n",
		"pkg/ok.go": "package pkg\n\n// A is fine.\nfunc A() int { return 1 }\n",
		"notes.txt": "not go\n",
	})
	// In the sandbox, as Odin runs it.
	r := &Runner{Root: root, Launcher: sandbox.New(sandbox.Options{Mode: sandbox.ModeAuto, Root: root, CacheDir: sharedCache(t)})}
	files := []string{filepath.Join(root, "main.go"), filepath.Join(root, "pkg/ok.go"), filepath.Join(root, "notes.txt"), filepath.Join(root, "gone.go")}
	rep := r.Lint(t.Context(), files)
	var cmds []string
	for _, run := range rep.Runs {
		cmds = append(cmds, run.Kind+": "+run.Command)
	}
	if diff := cmp.Diff([]string{"format: gofmt -l -w main.go pkg/ok.go", "lint: go vet . ./pkg"}, cmds); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if rep.Clean {
		t.Errorf("go vet's Printf finding must make the pass unclean: %+v", rep)
	}
	if got := rep.Runs[0].Fixed; !cmp.Equal(got, []string{"main.go"}) {
		t.Errorf("the formatter fixed %v, want [main.go]", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "main.go")); !strings.Contains(string(b), "func main() {\n\tfmt.Printf") {
		t.Errorf("main.go was not formatted:\n%s", b)
	}
	if !strings.Contains(rep.Runs[1].Output, "wrong type") {
		t.Errorf("vet output lacks the finding: %q", rep.Runs[1].Output)
	}

	writeFiles(t, root, map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%s\\n\", \"x\")\n}\n"})
	if rep := r.Lint(t.Context(), files[:2]); !rep.Clean {
		t.Errorf("a clean project's pass is unclean: %+v", rep.Runs)
	}
}

// Configured commands win over detection; {files} places the files.
func TestLintConfigured(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a b.py": "x=1\n"})
	r := &Runner{Root: root, Quality: config.Quality{Format: "echo fmt {files} >> log.txt", Lint: "false"}}
	rep := r.Lint(t.Context(), []string{filepath.Join(root, "a b.py")})
	if len(rep.Runs) != 2 || rep.Runs[0].Command != "echo fmt 'a b.py' >> log.txt" || rep.Runs[1].Command != "false" {
		t.Fatalf("runs: %+v", rep.Runs)
	}
	if rep.Clean {
		t.Error("a failing configured linter must make the pass unclean")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "log.txt")); string(b) != "fmt a b.py\n" {
		t.Errorf("the formatter did not run as configured: %q", b)
	}
	if rep := r.Lint(t.Context(), nil); rep.Note == "" || len(rep.Runs) != 0 {
		t.Errorf("no files: %+v", rep)
	}
}

// sharedCache is a build cache the sandboxed test commands may write, kept
// between runs: a fresh one would rebuild the standard library (with
// coverage instrumentation) on every run.
func sharedCache(t *testing.T) string {
	dir := filepath.Join(os.TempDir(), "odin-qa-test-cache")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
