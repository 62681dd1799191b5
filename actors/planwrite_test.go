package actors

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWritePlanRefusesSymlinkedPlansDir: a project shipping .odin/plans as
// a symlink to a directory outside it must not get plan mode to write
// there.
func TestWritePlanRefusesSymlinkedPlansDir(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(root, ".odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".odin", "plans")); err != nil {
		t.Fatal(err)
	}
	if _, err := writePlan(root, "add a flag", "1. do it", time.Unix(0, 0)); err == nil {
		t.Error("writePlan through a symlinked .odin/plans succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a plan was written outside the project: %v", entries)
	}
	os.Remove(filepath.Join(root, ".odin", "plans"))
	path, err := writePlan(root, "add a flag", "1. do it", time.Unix(0, 0))
	if err != nil || filepath.Dir(path) != filepath.Join(root, ".odin", "plans") {
		t.Fatalf("writePlan = %s, %v", path, err)
	}
}
