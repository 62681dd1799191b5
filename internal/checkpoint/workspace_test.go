package checkpoint

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// dumpTree describes every entry beneath root (but .git): type, mode,
// and the hash of each file, one line each, sorted.
func dumpTree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		if fi.Mode().Type() == fs.ModeSymlink {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// newTestWorkspace watches root with the given limits; its clock runs an
// hour ahead, so the files a test just wrote are not racy (a real scan
// re-reads files changed within racyWindow whatever their stat).
func newTestWorkspace(t *testing.T, root string, lim Limits, maxBlobs int64, hide func(string, fs.FileMode) bool) *Workspace {
	t.Helper()
	blobs, err := NewBlobs(filepath.Join(t.TempDir(), "blobs"), maxBlobs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = blobs.Close() })
	w, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: blobs, Limits: lim, Hide: hide})
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Now().Add(time.Hour) }
	return w
}

func summary(found []File, root string) []string {
	var out []string
	for _, f := range found {
		rel, _ := filepath.Rel(root, f.Path)
		if strings.HasSuffix(f.Path, "/") {
			rel += "/"
		}
		kind := "file"
		switch {
		case f.Mode.IsDir():
			kind = "dir"
		case f.Mode&fs.ModeIrregular != 0:
			kind = "unrestorable"
		case f.Mode.Type() == fs.ModeSymlink:
			kind = "link"
		}
		state := "created"
		switch {
		case f.Existed && slices.Contains(f.AfterHashes, Deleted):
			state = "deleted"
		case f.Existed && f.Mode.IsDir():
			state = "deleted"
		case f.Existed:
			state = "modified"
		}
		out = append(out, rel+" "+kind+" "+state)
	}
	return out
}

// A command's modifications, deletions, new files, new nested
// directories, mode changes and removed directories are found, ignored
// files and .git are not, and restoring what was found brings the tree
// back byte for byte.
func TestWorkspaceFindsWhatACommandChanged(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(t, filepath.Join(root, ".gitignore"), "build/\n*.log\n", 0o644)
	write(t, filepath.Join(root, "a.txt"), "alpha\n", 0o644)
	write(t, filepath.Join(root, "b.txt"), "bravo\n", 0o644)
	write(t, filepath.Join(root, "run.sh"), "echo hi\n", 0o644)
	write(t, filepath.Join(root, "same.txt"), "same\n", 0o644)
	write(t, filepath.Join(root, "gone", "x.txt"), "x\n", 0o600)
	write(t, filepath.Join(root, "build", "out.o"), "obj\n", 0o644)
	before := dumpTree(t, root)
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	if found, err := w.Begin(t.Context()); err != nil || len(found) != 0 {
		t.Fatalf("first Begin = %v, %v; want nothing found", found, err)
	}

	// The "command".
	write(t, filepath.Join(root, "a.txt"), "alpha, edited\n", 0o644)
	if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "same.txt"), "same\n", 0o644) // rewritten, same content
	write(t, filepath.Join(root, "new", "deep", "c.txt"), "sea\n", 0o644)
	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "build", "out.o"), "obj2\n", 0o644)
	write(t, filepath.Join(root, "debug.log"), "log\n", 0o644)
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/other\n", 0o644)

	found, err := w.End(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a.txt file modified",
		"b.txt file deleted",
		"gone/ dir deleted",
		"gone/x.txt file deleted",
		"new/ dir created",
		"new/deep/ dir created",
		"new/deep/c.txt file created",
		"run.sh file modified",
	}
	if diff := cmp.Diff(want, summary(found, root)); diff != "" {
		t.Fatalf("found (-want +got):\n%s", diff)
	}
	// Undo as odin undo does it: the change set holds what was found.
	tr := NewTracker(root, "cmd")
	tr.Record(found)
	outcomes, err := Restore(tr.Files(), []string{root}, false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "build", "out.o"), "obj\n", 0o644) // ignored: not undone
	if err := os.Remove(filepath.Join(root, "debug.log")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dumpTree(t, root)); diff != "" {
		t.Fatalf("tree after restore (-before +after):\n%s\noutcomes: %+v", diff, outcomes)
	}
	// The quality gates and the turn's summary see a command's files as
	// they see the write tools': in the order found, without directories.
	var rel []string
	for _, p := range tr.Changed() {
		r, _ := filepath.Rel(root, p)
		rel = append(rel, filepath.ToSlash(r))
	}
	if diff := cmp.Diff([]string{"a.txt", "b.txt", "gone/x.txt", "new/deep/c.txt", "run.sh"}, rel); diff != "" {
		t.Errorf("Changed() (-want +got):\n%s", diff)
	}
}

// Changes made while no command runs (the user's, the write tools') are
// the new state, not a command's; changes made while another command
// runs are returned by the next Begin, since that command may have made
// them.
func TestWorkspaceAttributesOnlyWhileACommandRuns(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "one\n", 0o644)
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	ctx := t.Context()
	if _, err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if found, _ := w.End(ctx); len(found) != 0 {
		t.Fatalf("End after a command that changed nothing = %v", summary(found, root))
	}
	write(t, filepath.Join(root, "a.txt"), "user's edit\n", 0o644)
	if found, _ := w.Begin(ctx); len(found) != 0 {
		t.Fatalf("Begin after a change between commands = %v, want it taken as the state", summary(found, root))
	}
	write(t, filepath.Join(root, "a.txt"), "first command\n", 0o644)
	found, err := w.Begin(ctx) // a second command starts while the first runs
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt file modified"}, summary(found, root)); diff != "" {
		t.Fatalf("Begin while a command runs (-want +got):\n%s", diff)
	}
	if string(found[0].Content) != "user's edit\n" {
		t.Errorf("before-content = %q, want the state before the first command", found[0].Content)
	}
	if found, _ := w.End(ctx); len(found) != 0 {
		t.Errorf("End found %v again", summary(found, root))
	}
	if _, err := w.End(ctx); err != nil {
		t.Fatal(err)
	}
}

// A repeated scan of an unchanged tree reads no file; a changed file is
// read again even when its size and modification time are unchanged,
// as long as it changed close to the scan (the racy window).
func TestWorkspaceRereadsOnlyWhatMayHaveChanged(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		write(t, filepath.Join(root, fmt.Sprintf("d%d", i%5), fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("file %d\n", i), 0o644)
	}
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	ctx := t.Context()
	if _, err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.reads.Load(); got != 50 {
		t.Fatalf("first scan read %d files, want 50", got)
	}
	if _, err := w.End(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.reads.Load(); got != 50 {
		t.Fatalf("second scan of an unchanged tree read %d more files, want 0", got-50)
	}

	// Same size, same mtime, new content: the change is still found
	// (by the change time, and with the real clock the file is racy).
	w.now = time.Now
	p := filepath.Join(root, "d0", "f0.txt")
	fi, _ := os.Stat(p)
	if _, err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, p, "FILE 0\n", 0o644)
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	found, err := w.End(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d0/f0.txt file modified"}, summary(found, root)); diff != "" {
		t.Fatalf("found (-want +got):\n%s", diff)
	}
}

// Files past the limits, or on the read deny list, get no copy: a
// command that changes or deletes them yields an entry undo reports as
// not restorable (and leaves alone), never one it claims to restore.
func TestWorkspaceLimitsAreReportedNotRestorable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "big.bin"), strings.Repeat("b", 100), 0o644)
	write(t, filepath.Join(root, "a.txt"), strings.Repeat("a", 40), 0o644)
	write(t, filepath.Join(root, "z.txt"), strings.Repeat("z", 40), 0o644)
	write(t, filepath.Join(root, ".env"), "SECRET=1\n", 0o600)
	hide := func(p string, _ fs.FileMode) bool { return filepath.Base(p) == ".env" }
	// 64 bytes per file; 60 in all, so one of a.txt and z.txt is kept
	// (files are read in parallel: which one is not fixed).
	w := newTestWorkspace(t, root, Limits{MaxFileBytes: 64}, 60, hide)
	ctx := t.Context()
	if _, err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "big.bin"), "small now", 0o644)
	write(t, filepath.Join(root, "a.txt"), "changed", 0o644)
	write(t, filepath.Join(root, "z.txt"), "changed", 0o644)
	if err := os.Remove(filepath.Join(root, ".env")); err != nil {
		t.Fatal(err)
	}
	found, err := w.End(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kept, full := "a.txt", "z.txt"
	for _, f := range found {
		if filepath.Base(f.Path) == "a.txt" && f.Mode&fs.ModeIrregular != 0 {
			kept, full = "z.txt", "a.txt"
		}
	}
	byName := map[string]File{}
	for _, f := range found {
		byName[filepath.Base(f.Path)] = f
	}
	if len(found) != 4 || byName[kept].Mode.Type() != 0 || !byName[kept].Existed || string(byName[kept].Content) != strings.Repeat(kept[:1], 40) {
		t.Fatalf("found %v; want %s restorable with its content", summary(found, root), kept)
	}
	for name, want := range map[string]string{
		".env":    "a command deleted it, but it is on the read deny list",
		"big.bin": "a command changed it, but it is 100 bytes, over the 64 bytes Odin copies per file",
		full:      "a command changed it, but Odin's copies of the workspace reached their 60 bytes limit",
	} {
		f := byName[name]
		if f.Mode&fs.ModeIrregular == 0 || !strings.HasPrefix(string(f.Content), want) {
			t.Errorf("%s: mode %v, reason %q; want not restorable because %q", name, f.Mode, f.Content, want)
		}
	}
	outcomes, err := Restore(found, []string{root}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if filepath.Base(o.Path) != kept && o.Action != ActionNotRestorable {
			t.Errorf("%s: %s, want %q", o.Path, o.Action, ActionNotRestorable)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, full)); string(data) != "changed" {
		t.Errorf("%s = %q: an entry without a copy must be left alone", full, data)
	}
	if data, _ := os.ReadFile(filepath.Join(root, kept)); string(data) != strings.Repeat(kept[:1], 40) {
		t.Errorf("%s = %q, want it restored", kept, data)
	}
}

// A walk stopped at MaxFiles does not take the files beyond it for new
// ones when an earlier file goes and one of them comes into the walk.
func TestWorkspaceWalkLimit(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		write(t, filepath.Join(root, n+".txt"), n, 0o644)
	}
	w := newTestWorkspace(t, root, Limits{MaxFiles: 3}, 0, nil)
	ctx := t.Context()
	if _, err := w.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "a.txt")); err != nil {
		t.Fatal(err)
	}
	found, err := w.End(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt file deleted"}, summary(found, root)); diff != "" {
		t.Fatalf("found (-want +got):\n%s", diff)
	}
}

// Directories a change set created are removed on restore, deepest first,
// when empty; one holding someone else's file is kept and the outcome
// says why; one the change set removed is made again.
func TestRestoreDirectories(t *testing.T) {
	root := t.TempDir()
	sep := string(filepath.Separator)
	write(t, filepath.Join(root, "made", "deep", "f.txt"), "f", 0o644)
	write(t, filepath.Join(root, "shared", "theirs.txt"), "t", 0o644)
	files := []File{
		{Path: filepath.Join(root, "made") + sep, Mode: fs.ModeDir | 0o755},
		{Path: filepath.Join(root, "made", "deep") + sep, Mode: fs.ModeDir | 0o755},
		{Path: filepath.Join(root, "made", "deep", "f.txt"), AfterHashes: []string{hashBytes([]byte("f"))}},
		{Path: filepath.Join(root, "shared") + sep, Mode: fs.ModeDir | 0o755},
		{Path: filepath.Join(root, "removed", "inner") + sep, Existed: true, Mode: fs.ModeDir | 0o700},
	}
	outcomes, err := Restore(files, []string{root}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range outcomes {
		rel, _ := filepath.Rel(root, o.Path)
		got[rel] = o.Action
	}
	want := map[string]string{"made": "removed", "made/deep": "removed", "made/deep/f.txt": "removed", "shared": ActionKept, "removed/inner": ActionRecreated}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("actions (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); !os.IsNotExist(err) {
		t.Errorf("made/ still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "shared", "theirs.txt")); err != nil {
		t.Errorf("someone else's file went: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(root, "removed", "inner")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("removed/inner not recreated with its mode: %v %v", fi, err)
	}
}

// Workspaces sharing a blob store keep one copy per content, and the
// copies go when the last workspace using them closes.
func TestBlobsAreSharedAndReleased(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "same", 0o644)
	write(t, filepath.Join(root, "b.txt"), "same", 0o644)
	blobs, err := NewBlobs(filepath.Join(t.TempDir(), "blobs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ws []*Workspace
	for range 2 {
		w, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: blobs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Begin(t.Context()); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if got := blobs.Bytes(); got != 4 {
		t.Fatalf("copies hold %d bytes, want 4 (one copy of one content)", got)
	}
	_ = ws[0].Close()
	if got := blobs.Bytes(); got != 4 {
		t.Fatalf("after one close: %d bytes, want 4", got)
	}
	_ = ws[1].Close()
	fi, err := os.Stat(filepath.Join(blobs.dir, "pack"))
	if got := blobs.Bytes(); got != 0 || err != nil || fi.Size() != 0 {
		t.Fatalf("after both closed: %d bytes held, pack %v (%v); want nothing", got, fi, err)
	}
}

// The pack is rewritten without the contents no longer used once they
// are most of it, and what is still used reads back intact, as do the
// large contents kept in files of their own.
func TestBlobsPackCompaction(t *testing.T) {
	b, err := NewBlobs(filepath.Join(t.TempDir(), "blobs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.compactAt = 1000
	var hashes []string
	for i := range 100 {
		data := []byte(fmt.Sprintf("content %03d %s", i, strings.Repeat("z", 80)))
		h := hashBytes(data)
		if kept, err := b.putBytes(h, data); !kept || err != nil {
			t.Fatalf("putBytes: %v %v", kept, err)
		}
		hashes = append(hashes, h)
	}
	big := []byte(strings.Repeat("B", packMax+1))
	bigHash := hashBytes(big)
	if kept, err := b.putFile(bigHash, int64(len(big)), func(name string) error { return os.WriteFile(name, big, 0o600) }); !kept || err != nil {
		t.Fatalf("putFile: %v %v", kept, err)
	}
	before, _ := os.Stat(filepath.Join(b.dir, "pack"))
	for _, h := range hashes[:90] {
		b.unref(h)
	}
	after, _ := os.Stat(filepath.Join(b.dir, "pack"))
	if after.Size() >= before.Size()/2 {
		t.Fatalf("pack %d bytes after dropping 90%% of %d: not compacted", after.Size(), before.Size())
	}
	for _, h := range append(hashes[90:], bigHash) {
		if _, err := b.read(h); err != nil {
			t.Errorf("read %s after compaction: %v", h[:8], err)
		}
	}
	if _, err := b.read(hashes[0]); err == nil {
		t.Error("a dropped content still reads")
	}
}

// Commands of parallel agents bracket their runs concurrently.
func TestWorkspaceConcurrentCommands(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "seed.txt"), "seed", 0o644)
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	ctx := context.Background()
	var mu sync.Mutex
	all := map[string]bool{}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found, err := w.Begin(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			write(t, filepath.Join(root, fmt.Sprintf("out%d.txt", i)), "x", 0o644)
			more, err := w.End(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, f := range append(found, more...) {
				all[filepath.Base(f.Path)] = true
			}
		}()
	}
	wg.Wait()
	for i := range 4 {
		if !all[fmt.Sprintf("out%d.txt", i)] {
			t.Errorf("out%d.txt was never reported created (got %v)", i, all)
		}
	}
}

// Commands that change symbolic links are undone: a file replaced by a
// link to a file outside the project, a link retargeted, a link created,
// a link removed and a link replaced by a file. Undo makes and removes
// links in place and never writes through one: the file outside the
// project (the canary) is never written, whatever the links point at.
func TestWorkspaceUndoesLinkChanges(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	canary := filepath.Join(outside, "canary")
	write(t, canary, "outside\n", 0o644)
	write(t, filepath.Join(root, "a.txt"), "alpha\n", 0o644)
	write(t, filepath.Join(root, "b.txt"), "bravo\n", 0o644)
	link := func(target, name string) {
		t.Helper()
		_ = os.Remove(filepath.Join(root, name))
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("a.txt", "current")
	link("b.txt", "old")
	link("b.txt", "swap")
	before := dumpTree(t, root)
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	if _, err := w.Begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The "command".
	link(canary, "a.txt")                                         // a file replaced by a link out of the project
	link("b.txt", "current")                                      // retargeted
	link(canary, "made")                                          // created
	if err := os.Remove(filepath.Join(root, "old")); err != nil { // removed
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(root, "swap"))
	write(t, filepath.Join(root, "swap"), "now a file\n", 0o644) // a link replaced by a file

	found, err := w.End(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.txt file modified", "current link modified", "made link created", "old link deleted", "swap link modified"}
	if diff := cmp.Diff(want, summary(found, root)); diff != "" {
		t.Fatalf("found (-want +got):\n%s", diff)
	}
	tr := NewTracker(root, "cmd")
	tr.Record(found)
	if _, err := Restore(tr.Files(), []string{root}, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dumpTree(t, root)); diff != "" {
		t.Errorf("tree after undo (-before +after):\n%s", diff)
	}
	if b, _ := os.ReadFile(canary); string(b) != "outside\n" {
		t.Errorf("the file outside the project was written: %q", b)
	}
}

// A link the user retargeted after the command is someone else's change:
// undo stops unless forced, and then puts the link back as it was.
func TestWorkspaceLinkChangedAfterwardsIsAConflict(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "alpha\n", 0o644)
	if err := os.Symlink("a.txt", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	w := newTestWorkspace(t, root, Limits{}, 0, nil)
	if _, err := w.Begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	retarget := func(target string) {
		t.Helper()
		if err := os.Remove(filepath.Join(root, "l")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, "l")); err != nil {
			t.Fatal(err)
		}
	}
	retarget("b.txt")
	found, err := w.End(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	retarget("c.txt") // the user's change, after the command
	tr := NewTracker(root, "cmd")
	tr.Record(found)
	var ce *ConflictError
	if _, err := Restore(tr.Files(), []string{root}, false); !errors.As(err, &ce) {
		t.Fatalf("Restore = %v, want a ConflictError", err)
	}
	if got, _ := os.Readlink(filepath.Join(root, "l")); got != "c.txt" {
		t.Errorf("refused undo changed the link: -> %q", got)
	}
	if _, err := Restore(tr.Files(), []string{root}, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(root, "l")); got != "a.txt" {
		t.Errorf("forced undo: link -> %q, want a.txt", got)
	}
}

// A store no command used makes nothing on disk (most processes run no
// command); its first scan makes the directory, emptied of what a dead
// process with the same PID left, and Close removes it.
func TestBlobsAreMadeOnFirstUse(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "a", 0o644)
	dir := filepath.Join(t.TempDir(), "blobs")
	unused, err := NewBlobs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: unused}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("an unused store made its directory (%v)", err)
	}
	if err := unused.Close(); err != nil {
		t.Fatalf("closing an unused store: %v", err)
	}
	if err := unused.Ready(); err == nil {
		t.Fatal("a closed store made itself ready")
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("a closed store made its directory (%v)", err)
	}

	write(t, filepath.Join(dir, "stale"), "left by a dead process", 0o600)
	blobs, err := NewBlobs(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "stale")); err != nil {
		t.Fatalf("the store emptied its directory before its first use: %v", err)
	}
	if _, err := w.Begin(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "stale")); !os.IsNotExist(err) {
		t.Fatalf("a dead process's copy survived the first use (%v)", err)
	}
	if got := blobs.Bytes(); got != 1 {
		t.Fatalf("copies hold %d bytes after the first scan, want 1", got)
	}
	if err := blobs.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("Close left the store's directory (%v)", err)
	}
}

// A store whose directory cannot be made says so once, and every scan
// fails with ErrUnavailable (the change set then leaves commands
// unwatched, as without a store).
func TestBlobsUnavailable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "a", 0o644)
	parent := filepath.Join(t.TempDir(), "file")
	write(t, parent, "not a directory", 0o600)
	blobs, err := NewBlobs(filepath.Join(parent, "blobs"), 0)
	if err != nil {
		t.Fatal(err)
	}
	told := 0
	blobs.OnUnavailable = func(error) { told++ }
	w, err := NewWorkspace(WorkspaceOptions{Root: root, Blobs: blobs})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.Begin(t.Context()); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Begin: %v, want ErrUnavailable", err)
		}
	}
	if told != 1 {
		t.Fatalf("OnUnavailable told %d times, want once", told)
	}
	if err := blobs.Close(); err != nil {
		t.Fatalf("closing a store that could not be made: %v", err)
	}
}
