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
	if _, err := Restore(files, []string{root}, false); err != nil {
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

	_, err := Restore(files, []string{root}, false)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Files) != 1 || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("Restore = %v, want a ConflictError naming a.txt", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "three (someone else)" {
		t.Fatalf("refused restore touched the file: %q", got)
	}
	if _, err := Restore(files, []string{root}, true); err != nil {
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

// TestUndoAfterCrash: the process died after recording its intent, either
// before the write landed or after it, and before the commit. Undo tells
// the states apart without force and still refuses foreign changes.
func TestUndoAfterCrash(t *testing.T) {
	root := t.TempDir()
	landed, notLanded, created, foreign := filepath.Join(root, "landed"), filepath.Join(root, "not-landed"), filepath.Join(root, "new"), filepath.Join(root, "foreign")
	write(t, landed, "before", 0o644)
	write(t, notLanded, "before", 0o644)
	write(t, foreign, "before", 0o644)
	tr := NewTracker(root, "x")
	for _, p := range []string{landed, notLanded, created, foreign} {
		if err := tr.BeforeWrite(p); err != nil {
			t.Fatal(err)
		}
		if err := tr.IntendWrite(p, []byte("odin")); err != nil {
			t.Fatal(err)
		}
	}
	// What a crashed run leaves in the store: snapshots and intents only.
	var files []File
	for _, p := range tr.Changed() {
		content, existed, _ := tr.Snapshot(p)
		files = append(files, File{Path: p, Existed: existed, Mode: tr.Mode(p), Content: content, AfterHashes: tr.Intents(p)})
	}
	write(t, landed, "odin", 0o644)
	write(t, foreign, "someone else", 0o644)
	_, err := Restore(files, []string{root}, false)
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Files) != 1 || ce.Files[0] != foreign {
		t.Fatalf("Restore = %v, want a conflict on %s only", err, foreign)
	}
	write(t, foreign, "odin", 0o644)
	out, err := Restore(files, []string{root}, false)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]string{}
	for _, o := range out {
		actions[o.Path] = o.Action
	}
	want := map[string]string{landed: "restored", notLanded: "unchanged", created: "unchanged", foreign: "restored"}
	for p, a := range want {
		if actions[p] != a {
			t.Errorf("%s: %q, want %q", p, actions[p], a)
		}
	}
	for _, p := range []string{landed, notLanded, foreign} {
		if got, _ := os.ReadFile(p); string(got) != "before" {
			t.Errorf("%s = %q after undo", p, got)
		}
	}
}

// TestUndoRefusesSymlinkedDirectory: a directory of the change set was
// swapped for a symlink to a directory outside the project; undo must not
// restore or delete through it, even with force.
func TestUndoRefusesSymlinkedDirectory(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	edited, created := filepath.Join(root, "sub", "f"), filepath.Join(root, "sub", "new")
	write(t, edited, "before", 0o644)
	write(t, filepath.Join(outside, "f"), "outside f", 0o644)
	write(t, filepath.Join(outside, "new"), "outside new", 0o644)
	tr := NewTracker(root, "x")
	for _, p := range []string{edited, created} {
		if err := tr.BeforeWrite(p); err != nil {
			t.Fatal(err)
		}
	}
	write(t, edited, "odin", 0o644)
	write(t, created, "odin", 0o644)
	files := tr.Files()
	os.RemoveAll(filepath.Join(root, "sub"))
	if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		_, err := Restore(files, []string{root}, force)
		var te *TypeChangedError
		if !errors.As(err, &te) || len(te.Files) != 2 {
			t.Errorf("Restore(force=%v) = %v, want a TypeChangedError for both files", force, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "f")); string(got) != "outside f" {
		t.Errorf("undo wrote outside the project: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "new")); string(got) != "outside new" {
		t.Errorf("undo deleted outside the project: %q", got)
	}
}

// TestForgetAllowsASecondSnapshot: when persisting a snapshot failed, the
// write is aborted and the path forgotten, so the next attempt snapshots
// (and persists) again instead of writing with no way back.
func TestForgetAllowsASecondSnapshot(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	write(t, a, "one", 0o644)
	tr := NewTracker(root, "x")
	if err := tr.BeforeWrite(a); err != nil {
		t.Fatal(err)
	}
	tr.Forget(a)
	if _, _, ok := tr.Snapshot(a); ok || len(tr.Changed()) != 0 {
		t.Fatal("Forget left the snapshot")
	}
	write(t, a, "two", 0o644)
	if err := tr.BeforeWrite(a); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := tr.Snapshot(a); string(got) != "two" {
		t.Errorf("second snapshot = %q, want two", got)
	}
}
