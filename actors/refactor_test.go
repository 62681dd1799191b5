package actors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/gates"
)

// A single-file rename of an exported identifier, read from the
// checkpoint's before and the file on disk, forces review and QA; the
// same file with only a comment changed does not.
func TestFactsFindSingleFileRename(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	main := filepath.Join(root, "main.go")
	src := "package main\n\n// Total sums.\nfunc Total(p []int) int { return 0 }\n\nfunc main() { Total(nil) }\n"
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after  string
		gated  bool
		reason string
	}{
		{strings.ReplaceAll(src, "Total", "Sum"), true, "significant refactor: renamed exported identifier Total → Sum (main.go)"},
		{strings.Replace(src, "sums", "adds up", 1), false, ""},
	} {
		tr := checkpoint.NewTracker(root, "t")
		if err := tr.BeforeWrite(main); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(main, []byte(tc.after), 0o644); err != nil {
			t.Fatal(err)
		}
		d := gates.Decide(facts(root, config.Default().Quality, []string{main}, "", tr))
		if d.ReviewRequired != tc.gated || (tc.gated && d.Reasons[0] != tc.reason) {
			t.Errorf("after %q: decision %+v", tc.after, d)
		}
		if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
