package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteFileAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two"), ModeOr(path, 0o644)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "two" || fi.Mode().Perm() != 0o640 {
		t.Errorf("content %q mode %v, want two 0640", got, fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	// Renaming a file over a non-empty directory fails.
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(target, []byte("data"), 0o644); err == nil {
		t.Fatal("replacing a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "sub" {
		t.Errorf("failure left files behind: %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

// attackTree is a root holding dir/ and a directory outside it; the
// attack swaps root/dir for a symlink to outside.
func attackTree(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func assertOutsideUnchanged(t *testing.T, outside string) {
	t.Helper()
	entries, _ := os.ReadDir(outside)
	got, _ := os.ReadFile(filepath.Join(outside, "f"))
	if len(entries) != 1 || string(got) != "outside" {
		t.Errorf("the directory outside the root changed: %v, f=%q", entries, got)
	}
}

func TestConfinedOpsRefuseSymlinkedDirectory(t *testing.T) {
	root, outside := attackTree(t)
	target := filepath.Join(root, "dir", "f")
	if err := WriteFileIn(root, target, []byte("pwned"), 0o644); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteFileIn through a symlinked directory: err %v, want ErrSymlink", err)
	}
	if err := RemoveIn(root, target); !errors.Is(err, ErrSymlink) {
		t.Errorf("RemoveIn through a symlinked directory: err %v, want ErrSymlink", err)
	}
	if err := MkdirAllIn(root, filepath.Join(root, "dir", "sub"), 0o755); !errors.Is(err, ErrSymlink) {
		t.Errorf("MkdirAllIn through a symlinked directory: err %v, want ErrSymlink", err)
	}
	if _, _, err := ReadFileIn(root, target, 0); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadFileIn through a symlinked directory: err %v, want ErrSymlink", err)
	}
	if _, err := LockDirIn(t.Context(), root, filepath.Join(root, "dir")); !errors.Is(err, ErrSymlink) {
		t.Errorf("LockDirIn of a symlinked directory: err %v, want ErrSymlink", err)
	}
	if err := WriteFileIn(root, filepath.Join(outside, "f"), []byte("pwned"), 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("WriteFileIn outside the root: err %v, want ErrOutside", err)
	}
	assertOutsideUnchanged(t, outside)
}

func TestWriteReplacesFinalSymlink(t *testing.T) {
	root, outside := attackTree(t)
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(outside, "f"), link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileIn(root, link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v %v", fi, err)
	}
	if err := RemoveIn(root, link); err != nil {
		t.Fatal(err)
	}
	assertOutsideUnchanged(t, outside)
}

// TestSwapRace flips a directory to a symlink and back while writing into
// it: no write may ever land outside the root.
func TestSwapRace(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	os.Mkdir(root, 0o755)
	os.Mkdir(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "f"), []byte("outside"), 0o644)
	dir := filepath.Join(root, "dir")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			os.RemoveAll(dir)
			if i%2 == 0 {
				os.Mkdir(dir, 0o755)
			} else {
				os.Symlink(outside, dir)
			}
		}
	}()
	for i := range 2000 {
		WriteFileIn(root, filepath.Join(dir, "f"), fmt.Appendf(nil, "w%d", i), 0o644)
	}
	cancel()
	<-done
	assertOutsideUnchanged(t, outside)
}

func TestStaleTemps(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	dead := 1 << 30           // beyond pid_max
	files := map[string]bool{ // name → stale
		fmt.Sprintf(".a.odin-%d-0000beef.tmp", dead):        true,
		fmt.Sprintf(".b.odin-%d-0000beef.tmp", os.Getpid()): false,
		".c.odin-123456.tmp":                                true, // legacy, old
		"keep.tmp":                                          false,
		".d.odin-x-y.tmp":                                   false,
	}
	for n := range files {
		p := filepath.Join(dir, n)
		os.WriteFile(p, nil, 0o600)
		os.Chtimes(p, now.Add(-2*time.Minute), now.Add(-2*time.Minute))
	}
	if err := CleanStaleTemps(dir, dir); err != nil {
		t.Fatal(err)
	}
	for n, stale := range files {
		_, err := os.Stat(filepath.Join(dir, n))
		if gone := err != nil; gone != stale {
			t.Errorf("%s: removed %v, want %v", n, gone, stale)
		}
	}
	// A write in the directory cleans it too.
	os.WriteFile(filepath.Join(dir, fmt.Sprintf(".e.odin-%d-00000001.tmp", dead)), nil, 0o600)
	if err := WriteFileAtomic(filepath.Join(dir, "e"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf(".e.odin-%d-00000001.tmp", dead))); err == nil {
		t.Error("a write left a dead writer's temporary file")
	}
}

func TestLockDirExcludes(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDirIn(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := LockDirIn(ctx, dir, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want it to wait until the deadline", err)
	}
	unlock()
	unlock2, err := LockDirIn(t.Context(), dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
}

func TestRootOf(t *testing.T) {
	if got := RootOf("/a/b/c", "/a", "/a/b", "/x"); got != "/a/b" {
		t.Errorf("RootOf = %s", got)
	}
	if got := RootOf("/z/f", "/a"); got != "/" {
		t.Errorf("RootOf outside every root = %s", got)
	}
}

// Attack: SymlinkIn through a directory that is a link out of the root
// makes nothing outside; in place it replaces a file or a link without
// following it.
func TestSymlinkInNeverFollows(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := SymlinkIn(root, filepath.Join(root, "out", "x"), "t"); err == nil {
		t.Error("SymlinkIn through a linked directory succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("made outside the root: %v", ents)
	}
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "l")
	if err := os.Symlink(canary, p); err != nil {
		t.Fatal(err)
	}
	if err := SymlinkIn(root, p, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadlinkIn(root, p); err != nil || got != "elsewhere" {
		t.Errorf("ReadlinkIn = %q, %v; want elsewhere", got, err)
	}
	if b, _ := os.ReadFile(canary); string(b) != "c" {
		t.Errorf("the old link's target was touched: %q", b)
	}
	if _, err := ReadlinkIn(root, filepath.Join(root, "out", "canary")); err == nil {
		t.Error("ReadlinkIn through a linked directory succeeded")
	}
}
