package changeset

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/checkpoint"
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

// TestCommandChangesAreUndoneFromTheStore: what a command did in a turn —
// on top of a write tool's change to the same file — is saved through the
// session's claim before the command's call returns, and undone from a
// reopened store like the write tools' changes: a later change by someone
// else to a file the command created stops undo unless forced, and a
// writer whose claim was taken over records nothing.
func TestCommandChangesAreUndoneFromTheStore(t *testing.T) {
	ctx := t.Context()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "odin.db")
	base, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := base.CreateSession(ctx, store.Session{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := base.Claim(ctx, sess.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	mainGo, gone, made := filepath.Join(root, "main.go"), filepath.Join(root, "gone.txt"), filepath.Join(root, "gen", "out.go")
	for p, c := range map[string]string{mainGo: "v0\n", gone: "bye\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blobs, err := checkpoint.NewBlobs(filepath.Join(t.TempDir(), "blobs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	ws, err := checkpoint.NewWorkspace(checkpoint.WorkspaceOptions{Root: root, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	sets := &Sets{Root: root, Store: claim, Session: sess.ID, Workspace: ws}
	tr := sets.Begin("generate")
	write(t, tr, mainGo, "v1\n") // the write tool first
	after, err := tr.BeforeCommand(ctx, root)
	if err != nil || after == nil {
		t.Fatalf("BeforeCommand: after is nil (%v)", err)
	}
	if err := os.WriteFile(mainGo, []byte("v2 by the command\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(made), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(made, []byte("package gen\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := after(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The command's files, not its directory: main.go the write tool had
	// already snapshotted, so it keeps its place as the write tool's.
	slices.Sort(changed)
	if want := []string{made, gone, mainGo}; !slices.Equal(changed, sortedCopy(want)) {
		t.Errorf("after() = %v, want the files the command changed %v", changed, want)
	}
	if got, want := tr.Changed(), []string{mainGo, gone, made}; !slices.Equal(got, want) && !slices.Equal(got, []string{mainGo, made, gone}) {
		t.Errorf("Changed() = %v, want the write tool's file, then the command's files (no directory): %v", got, want)
	}
	// No Commit: what a command changed is saved when its call returns
	// (a process killed before the turn's end can still be undone).
	if err := base.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.WriteFile(made, []byte("someone else's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var conflict *checkpoint.ConflictError
	if _, err := Undo(ctx, st, root, Roots(root, nil), false, time.Now()); !errors.As(err, &conflict) {
		t.Fatalf("Undo over someone else's change = %v, want a conflict", err)
	}
	if got, _ := os.ReadFile(mainGo); string(got) != "v2 by the command\n" {
		t.Fatalf("a refused undo changed main.go to %q", got)
	}
	msg, err := Undo(ctx, st, root, Roots(root, nil), true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(mainGo); string(got) != "v0\n" {
		t.Errorf("main.go = %q, want its content before the turn", got)
	}
	if got, _ := os.ReadFile(gone); string(got) != "bye\n" {
		t.Errorf("gone.txt = %q, want it back", got)
	}
	if _, err := os.Lstat(filepath.Dir(made)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("gen/ survived undo: %v", err)
	}
	for _, want := range []string{"main.go restored", "gone.txt restored", "gen/out.go removed", "gen/ removed (the change created this directory)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	// A writer fenced by a later claim records nothing.
	stale, err := st.Claim(ctx, sess.ID, "stale")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, sess.ID, "newer"); err != nil {
		t.Fatal(err)
	}
	tr2 := (&Sets{Root: root, Store: stale, Session: sess.ID, Workspace: ws}).Begin("fenced")
	after, err = tr2.BeforeCommand(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "late.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := after(ctx); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a fenced writer's record = %v, want ErrFenced", err)
	}
	cps, err := st.Checkpoints(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cps {
		if c.Label == "fenced" {
			t.Errorf("the fenced writer stored checkpoint %+v", c)
		}
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// A command whose workspace copies have no place (the snapshots
// directory cannot be made, found at the first command) runs unwatched,
// as in a process without a state directory, and nothing is recorded.
func TestCommandUnwatchedWithoutPlaceForCopies(t *testing.T) {
	ctx := t.Context()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := st.CreateSession(ctx, store.Session{Project: root})
	if err != nil {
		t.Fatal(err)
	}
	mainGo := filepath.Join(root, "main.go")
	if err := os.WriteFile(mainGo, []byte("v0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	blobs, err := checkpoint.NewBlobs(filepath.Join(notDir, "blobs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var told error
	blobs.OnUnavailable = func(err error) { told = err }
	ws, err := checkpoint.NewWorkspace(checkpoint.WorkspaceOptions{Root: root, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	tr := (&Sets{Root: root, Store: st, Session: sess.ID, Workspace: ws}).Begin("generate")
	after, err := tr.BeforeCommand(ctx, root)
	if err != nil || after != nil {
		t.Fatalf("BeforeCommand = (after set: %v, %v), want the command unwatched (nil, nil)", after != nil, err)
	}
	if !errors.Is(told, checkpoint.ErrUnavailable) {
		t.Fatalf("OnUnavailable told %v, want ErrUnavailable", told)
	}
	if got := tr.Changed(); len(got) != 0 {
		t.Fatalf("Changed() = %v, want nothing recorded", got)
	}
}
