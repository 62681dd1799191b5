package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DiffSince shows the whole change first, then only what changed after
// the contents it returned: a later gate round sees the fix, not the
// change set again; a file deleted since shows as removed.
func TestDiffSince(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a.go"), filepath.Join(root, "b.go")
	write(t, a, "package a\n", 0o644)
	tr := NewTracker(root, "x")
	for _, p := range []string{a, b} {
		if err := tr.BeforeWrite(p); err != nil {
			t.Fatal(err)
		}
	}
	write(t, a, "package a\n\nfunc A() {}\n", 0o644)
	write(t, b, "package a\n\nfunc B() {}\n", 0o644)

	first, seen := tr.DiffSince(tr.Changed(), nil)
	if first != tr.Diff(tr.Changed()) {
		t.Errorf("with nothing seen, DiffSince differs from Diff:\n%s", first)
	}
	if again, _ := tr.DiffSince(tr.Changed(), seen); again != "" {
		t.Errorf("nothing changed since, got a diff:\n%s", again)
	}

	write(t, a, "package a\n\nfunc A() { fixed() }\n", 0o644)
	since, seen := tr.DiffSince(tr.Changed(), seen)
	for _, want := range []string{"--- a/a.go", "-func A() {}", "+func A() { fixed() }"} {
		if !strings.Contains(since, want) {
			t.Errorf("the diff since lacks %q:\n%s", want, since)
		}
	}
	if strings.Contains(since, "b.go") || strings.Contains(since, "+package a") {
		t.Errorf("the diff since repeats what was seen:\n%s", since)
	}

	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	gone, _ := tr.DiffSince(tr.Changed(), seen)
	if !strings.Contains(gone, "+++ /dev/null") || !strings.Contains(gone, "-func B() {}") {
		t.Errorf("a file deleted since: got\n%s", gone)
	}
}
