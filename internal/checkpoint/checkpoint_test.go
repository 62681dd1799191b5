package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestUndoRestoresExactly(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a.go")
	script := filepath.Join(root, "run.sh")
	created := filepath.Join(root, "sub", "new.go")
	write(t, a, "package a\r\n\r\nfunc A() {}\r\n", 0o644)
	write(t, script, "#!/bin/sh\necho hi", 0o755)

	tr := NewTracker(root, "change")
	for _, p := range []string{a, script, created, a} { // a twice: first snapshot wins
		if err := tr.BeforeWrite(p); err != nil {
			t.Fatal(err)
		}
	}
	write(t, a, "package a\n\nfunc A() { panic(1) }\n", 0o600)
	write(t, script, "changed", 0o644)
	write(t, created, "package sub\n", 0o644)
	if got := tr.Changed(); len(got) != 3 {
		t.Fatalf("Changed() = %v, want 3 unique files", got)
	}
	diff := tr.Diff(tr.Changed())
	for _, want := range []string{"--- a/a.go", "+++ b/a.go", "--- /dev/null", "+++ b/sub/new.go", "+func A() { panic(1) }"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	mod, cre := tr.FileChanges(tr.Changed())
	if len(mod) != 2 || len(cre) != 1 || cre[0].Path != "sub/new.go" || mod[0].LinesChanged == 0 {
		t.Errorf("FileChanges = %+v / %+v", mod, cre)
	}

	files := tr.Files()
	if err := Restore(files, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "package a\r\n\r\nfunc A() {}\r\n" {
		t.Errorf("a.go = %q", got)
	}
	if fi, _ := os.Stat(script); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755", fi.Mode().Perm())
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Errorf("created file still exists: %v", err)
	}
}

func TestUndoRefusesForeignChanges(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a.txt")
	write(t, a, "one", 0o644)
	tr := NewTracker(root, "x")
	if err := tr.BeforeWrite(a); err != nil {
		t.Fatal(err)
	}
	write(t, a, "two", 0o644)
	files := tr.Files()
	write(t, a, "three (someone else)", 0o644)

	err := Restore(files, false)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Files) != 1 || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Restore = %v, want a ConflictError naming a.txt", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "three (someone else)" {
		t.Fatalf("refused restore touched the file: %q", got)
	}
	if err := Restore(files, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(a); string(got) != "one" {
		t.Fatalf("forced restore = %q", got)
	}
}

func TestConcurrentSnapshots(t *testing.T) {
	root := t.TempDir()
	tr := NewTracker(root, "x")
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = tr.BeforeWrite(filepath.Join(root, "f", string(rune('a'+i%5))))
		}()
	}
	wg.Wait()
	if n := len(tr.Changed()); n != 5 {
		t.Fatalf("Changed() has %d entries, want 5", n)
	}
}

func TestSnapshotRejectsDirectories(t *testing.T) {
	root := t.TempDir()
	if err := NewTracker(root, "x").BeforeWrite(root); err == nil {
		t.Fatal("snapshot of a directory succeeded")
	}
}
