package serve

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnderRootRefusesEscapes(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "rootother") // shares the prefix, not the root
	for _, d := range []string{filepath.Join(root, "p"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: Options{Roots: []string{root}}}
	if got, err := s.underRoot(filepath.Join(root, "p")); err != nil || got != filepath.Join(root, "p") {
		t.Errorf("inside: %q %v", got, err)
	}
	for _, bad := range []string{outside, filepath.Join(root, "link"), filepath.Join(root, "p", "..", ".."), "relative/dir", filepath.Join(root, "missing")} {
		if got, err := s.underRoot(bad); err == nil {
			t.Errorf("underRoot(%q) = %q, want refused", bad, got)
		}
	}
}
