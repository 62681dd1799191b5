package changeset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/store"
)

// write changes path the way a file tool does: snapshot, intent, write.
func write(t *testing.T, tr *Tracker, path, content string) {
	t.Helper()
	if err := tr.BeforeWrite(path); err != nil {
		t.Fatal(err)
	}
	if err := tr.IntendWrite(path, []byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUndoRestoresTheTurnFromTheStore: a turn's change set, recorded
// through a store that is then closed and reopened (a new process), is
// undone byte for byte — the edited file restored, the created one
// removed — once only; a file someone changed afterwards is left alone
// unless forced.
func TestUndoRestoresTheTurnFromTheStore(t *testing.T) {
	ctx := t.Context()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "odin.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, store.Session{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	edited, created := filepath.Join(root, "main.go"), filepath.Join(root, "new.go")
	if err := os.WriteFile(edited, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := &Sets{Root: root, Store: st, Session: sess.ID}
	tr := sets.Begin("add new.go")
	write(t, tr, edited, "after\n")
	write(t, tr, created, "package x\n")
	if err := sets.Commit(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msg, err := Undo(ctx, st, root, Roots(root, nil), false, time.Now())
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if got, _ := os.ReadFile(edited); string(got) != "before\n" {
		t.Errorf("main.go = %q after undo, want its content before the turn", got)
	}
	if _, err := os.Lstat(created); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.go survived undo: %v", err)
	}
	for _, want := range []string{`Restored 2 files from the change set "add new.go"`, "main.go restored", "new.go removed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if _, err := Undo(ctx, st, root, Roots(root, nil), false, time.Now()); !errors.Is(err, ErrNothing) {
		t.Errorf("second undo: %v, want ErrNothing", err)
	}

	// Someone edits the file after the next turn: undo refuses to lose
	// their change, and --force restores over it.
	sets.Store = st
	tr = sets.Begin("edit again")
	write(t, tr, edited, "odin's\n")
	if err := sets.Commit(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edited, []byte("someone else's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(ctx, st, root, Roots(root, nil), false, time.Now()); err == nil {
		t.Fatal("undo over someone else's change succeeded without force")
	}
	if got, _ := os.ReadFile(edited); string(got) != "someone else's\n" {
		t.Fatalf("a refused undo changed the file: %q", got)
	}
	msg, err = Undo(ctx, st, root, Roots(root, nil), true, time.Now())
	if err != nil {
		t.Fatalf("forced undo: %v", err)
	}
	if got, _ := os.ReadFile(edited); string(got) != "before\n" || !strings.Contains(msg, "--force") {
		t.Errorf("forced undo: file %q, message %q", got, msg)
	}
}

// TestRootsResolveAddedDirs: relative directories are taken against the
// root and resolved; missing ones are left out.
func TestRootsResolveAddedDirs(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(root, "lib"), link); err != nil {
		t.Fatal(err)
	}
	got := Roots(root, []string{"lib", link, "missing"})
	want := []string{root, filepath.Join(root, "lib"), filepath.Join(root, "lib")}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Roots = %q, want %q", got, want)
	}
}
