package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrepBounds: a file past MaxFileSize is skipped by its size without
// being read (a sparse 1 GiB file would otherwise be read whole), and a
// tight MaxInFlight with many workers and big files still finishes with
// every match.
func TestGrepBounds(t *testing.T) {
	root := t.TempDir()
	huge := filepath.Join(root, "huge.txt")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for i := range 8 {
		body := strings.Repeat("filler line\n", 100_000) + fmt.Sprintf("needle %d\n", i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Compile("needle", MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(t.Context(), root, GrepOptions{
		Matcher: m, Mode: FilesWithMatches,
		MaxFileSize: 4 << 20, MaxInFlight: 2 << 20,
		Walk: WalkOptions{Workers: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TooLarge != 1 || len(res.Files) != 8 {
		t.Errorf("TooLarge %d, files with matches %d; want 1 and 8", res.TooLarge, len(res.Files))
	}
}
