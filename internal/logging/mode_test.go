package logging

import (
	"os"
	"path/filepath"
	"testing"
)

// The log holds prompts and tool output: it is created 0600, and a log an
// older version left world-readable is tightened when opened.
func TestLogFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "state", "odin.log")
	old := filepath.Join(dir, "old.log")
	if err := os.WriteFile(old, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, old} {
		_, c, err := Open(path, "info")
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
		}
	}
}
