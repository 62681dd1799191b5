package term

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistoryPersistsMultiLineEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "history")
	h, err := LoadHistory(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"first", "two\nlines", "two\nlines", "  ", "quote \" and \\ back"} {
		if err := h.Add(e); err != nil {
			t.Fatalf("Add(%q): %v", e, err)
		}
	}
	want := []string{"first", "two\nlines", "quote \" and \\ back"}
	if diff := cmp.Diff(want, h.Entries()); diff != "" {
		t.Errorf("in memory (-want +got):\n%s", diff)
	}
	again, err := LoadHistory(path, 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again.Entries()); diff != "" {
		t.Errorf("reloaded (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history mode = %v, want 0600 (it may hold secrets typed at the prompt)", fi.Mode().Perm())
	}
}

func TestHistoryKeepsTheLimitAndCompactsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h, err := LoadHistory(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range strings.Fields("a b c d e f g h") {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"f", "g", "h"}, h.Entries()); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 6 {
		t.Errorf("file has %d lines, want at most twice the limit", n)
	}
	again, _ := LoadHistory(path, 3)
	if diff := cmp.Diff([]string{"f", "g", "h"}, again.Entries()); diff != "" {
		t.Errorf("reloaded (-want +got):\n%s", diff)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".history-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestHistorySkipsBadLinesAndMissingFile(t *testing.T) {
	dir := t.TempDir()
	h, err := LoadHistory(filepath.Join(dir, "none"), 0)
	if err != nil || h.Len() != 0 {
		t.Fatalf("missing file: %v, %d entries", err, h.Len())
	}
	path := filepath.Join(dir, "history")
	os.WriteFile(path, []byte("\"ok\"\nnot json\n\"\"\n\"also ok\"\n"), 0o600)
	h, err = LoadHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok", "also ok"}, h.Entries()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := LoadHistory(dir, 0); err == nil {
		t.Errorf("a directory as history file: want an error")
	}
}

func TestHistoryInMemoryOnly(t *testing.T) {
	h, err := LoadHistory("", 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"x", "y", "z"} {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"y", "z"}, h.Entries()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
