package actors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// An isolated specialist's guard maps the project's paths onto its
// worktree, keeps the session's protections there, and never resolves a
// write into the project itself.
func TestWorktreeGuard(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, tree := filepath.Join(base, "project"), filepath.Join(base, "state", "tree")
	for _, d := range []string{project, tree} {
		if err := os.MkdirAll(filepath.Join(d, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link in the worktree that leads into the project.
	if err := os.Symlink(filepath.Join(project, "pkg"), filepath.Join(tree, "escape")); err != nil {
		t.Fatal(err)
	}
	inner, err := policy.NewGuard(project, policy.GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := worktreeGuard{inner: inner, project: project, tree: tree}
	for _, tc := range []struct {
		path, want string
		denied     bool
	}{
		{path: filepath.Join(project, "pkg", "a.go"), want: filepath.Join(tree, "pkg", "a.go")},
		{path: filepath.Join(tree, "pkg", "a.go"), want: filepath.Join(tree, "pkg", "a.go")},
		{path: "pkg/b.go", want: filepath.Join(tree, "pkg", "b.go")},
		{path: filepath.Join(project, ".git", "config"), denied: true},
		{path: filepath.Join(tree, "odin.yaml"), denied: true},
		{path: filepath.Join(tree, "escape", "x.go"), denied: true},
	} {
		got, err := g.Resolve(t.Context(), tc.path, tool.AccessWrite)
		switch {
		case tc.denied && err == nil:
			t.Errorf("write %s resolved to %s, want a refusal", tc.path, got)
		case !tc.denied && (err != nil || got != tc.want):
			t.Errorf("write %s = %q, %v; want %s", tc.path, got, err, tc.want)
		}
	}
}

// A report's worktree paths become the project's.
func TestMapReport(t *testing.T) {
	result, _ := json.Marshal(messages.CodeResult{Summary: "changed /s/tree/a.go"})
	r := &messages.Report{Summary: "edited /s/tree/a.go", Files: []string{"/s/tree/a.go", "/elsewhere/b"}, Result: result}
	mapReport(r, "/s/tree", "/p")
	var got messages.CodeResult
	_ = json.Unmarshal(r.Result, &got)
	if r.Summary != "edited /p/a.go" || r.Files[0] != "/p/a.go" || r.Files[1] != "/elsewhere/b" || got.Summary != "changed /p/a.go" {
		t.Errorf("mapped report: %q %v %q", r.Summary, r.Files, got.Summary)
	}
}
