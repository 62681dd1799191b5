package term

import (
	"os"
	"path/filepath"
	"testing"
)

// The REPL history holds what the user typed: a history file an older
// version left world-readable is made 0600 on the next entry.
func TestHistoryFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHistory(path, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Add("secret prompt"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history has mode %v, want 0600", fi.Mode().Perm())
	}
}
