package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/odin-code/odin/internal/readdeny"
)

// TestExplain: the reasons the sandbox gives for a path a process could
// not use match what it enforces: a write outside the granted
// directories is read-only, one inside is not; with bubblewrap a file
// under /tmp not bound in is hidden; a read-denied file is hidden by its
// rule; a protected path inside a granted directory stays read-only.
func TestExplain(t *testing.T) {
	for _, mode := range kinds(t) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			home := t.TempDir()
			write(t, filepath.Join(home, ".netrc"), "machine x password y\n")
			deny, err := readdeny.New(readdeny.Options{Home: home, Root: p.root})
			if err != nil {
				t.Fatal(err)
			}
			l := New(Options{Mode: mode, Root: p.root, Protected: []string{p.state}, DenyRead: deny,
				Environ: func() []string { return baseEnv() }})
			granted := filepath.Join(p.outside, "granted")
			if err := os.MkdirAll(granted, 0o755); err != nil {
				t.Fatal(err)
			}
			hiddenTmp, err := os.MkdirTemp("/tmp", "odin-explain-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(hiddenTmp) })
			write(t, filepath.Join(hiddenTmp, "srv.js"), "x")
			spec := Spec{Writable: []string{granted, filepath.Dir(p.root)}}

			if b, ok := l.Explain(filepath.Join(p.outside, "other.txt"), true, spec); !ok || !b.ReadOnly {
				t.Errorf("write beside the granted dir: %+v %v, want read-only", b, ok)
			}
			if b, ok := l.Explain(filepath.Join(granted, "a.txt"), true, spec); ok {
				t.Errorf("write in the granted dir explained as blocked: %+v", b)
			}
			if b, ok := l.Explain(filepath.Join(p.root, ".git", "config"), true, spec); !ok || !b.ReadOnly {
				t.Errorf(".git inside a granted dir: %+v %v, want read-only", b, ok)
			}
			if b, ok := l.Explain(filepath.Join(home, ".netrc"), false, spec); !ok || !b.Hidden || b.DenyRule == "" {
				t.Errorf("a read-denied file: %+v %v, want hidden by a rule", b, ok)
			}
			b, ok := l.Explain(filepath.Join(hiddenTmp, "srv.js"), false, spec)
			if mode == ModeBubblewrap && (!ok || !b.Hidden) {
				t.Errorf("a file under the private /tmp: %+v %v, want hidden", b, ok)
			}
			if mode == ModeLandlock && ok {
				t.Errorf("Landlock keeps /tmp visible, yet explained %+v", b)
			}
			spec.Visible = []string{hiddenTmp}
			if b, ok := l.Explain(filepath.Join(hiddenTmp, "srv.js"), false, spec); ok {
				t.Errorf("a visible file under /tmp explained as blocked: %+v", b)
			}
		})
	}
}
