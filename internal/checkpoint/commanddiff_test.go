package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The files a command changed (recorded by Record) are among Changed,
// after the write tools' files and without directories, and Diff,
// DiffSince and FileChanges render them as they render a write tool's;
// what has no readable text (no copy, binary, too large) is one line.
func TestCommandChangesAreChangedAndDiffed(t *testing.T) {
	root := t.TempDir()
	p := func(name string) string { return filepath.Join(root, name) }
	write(t, p("tool.go"), "package a\n", 0o644)
	write(t, p("sed.go"), "package a\n\nvar X = 1\n", 0o644)
	write(t, p("img.bin"), "GIF\x00old", 0o644)
	tr := NewTracker(root, "x")
	if err := tr.BeforeWrite(p("tool.go")); err != nil {
		t.Fatal(err)
	}
	write(t, p("tool.go"), "package a\n\nfunc A() {}\n", 0o644)
	// What a command did: sed -i on sed.go, a new gen/out.go, a binary
	// rewritten, a huge file it changed that Odin had no copy of.
	write(t, p("sed.go"), "package a\n\nvar X = 2\n", 0o644)
	write(t, p("gen/out.go"), "package gen\n", 0o644)
	write(t, p("img.bin"), "GIF\x00new", 0o644)
	write(t, p("huge.dat"), "now\n", 0o644)
	tr.Record([]File{
		{Path: p("sed.go"), Existed: true, Mode: 0o644, Content: []byte("package a\n\nvar X = 1\n")},
		{Path: p("gen") + string(filepath.Separator), Mode: fs.ModeDir | 0o755},
		{Path: p("gen/out.go"), Mode: 0o644},
		{Path: p("img.bin"), Existed: true, Mode: 0o644, Content: []byte("GIF\x00old")},
		{Path: p("huge.dat"), Existed: true, Mode: fs.ModeIrregular | 0o644, Content: []byte("a command changed it, but it is larger than 16 MiB")},
	})

	want := []string{p("tool.go"), p("sed.go"), p("gen/out.go"), p("img.bin"), p("huge.dat")}
	if got := tr.Changed(); !slices.Equal(got, want) {
		t.Fatalf("Changed() = %v\nwant %v", got, want)
	}
	diff := tr.Diff(tr.Changed())
	for _, s := range []string{
		"--- a/tool.go\n+++ b/tool.go\n",
		"--- a/sed.go\n+++ b/sed.go\n", "-var X = 1\n+var X = 2\n",
		"--- /dev/null\n+++ b/gen/out.go\n", "+package gen\n",
		"Binary files a/img.bin and b/img.bin differ\n",
		"Binary or too large, not shown: huge.dat (a command changed it, but it is larger than 16 MiB)\n",
	} {
		if !strings.Contains(diff, s) {
			t.Errorf("Diff lacks %q:\n%s", s, diff)
		}
	}
	if strings.Contains(diff, "GIF") || strings.Contains(diff, "gen/\n") {
		t.Errorf("Diff shows a binary's bytes or a directory:\n%s", diff)
	}
	first, seen := tr.DiffSince(tr.Changed(), nil)
	if first != diff {
		t.Errorf("DiffSince from nothing differs from Diff:\n%s\nvs\n%s", first, diff)
	}
	// A later round shows only what changed since: sed.go again.
	write(t, p("sed.go"), "package a\n\nvar X = 3\n", 0o644)
	again, _ := tr.DiffSince(tr.Changed(), seen)
	if !strings.Contains(again, "-var X = 2\n+var X = 3\n") || strings.Contains(again, "huge.dat") || strings.Contains(again, "img.bin") || strings.Contains(again, "tool.go") {
		t.Errorf("the later round's diff:\n%s\nwant only sed.go's X = 2 -> 3", again)
	}

	mod, created := tr.FileChanges(tr.Changed())
	var names []string
	for _, fc := range mod {
		names = append(names, fc.Path)
		if fc.Path == "sed.go" && fc.LinesChanged != 2 {
			t.Errorf("sed.go: %d lines changed, want 2:\n%s", fc.LinesChanged, fc.Diff)
		}
		if fc.Path == "huge.dat" && (fc.LinesChanged != 0 || !strings.HasPrefix(fc.Diff, "Binary or too large, not shown: huge.dat")) {
			t.Errorf("huge.dat: %+v, want one not-shown line", fc)
		}
	}
	if want := []string{"tool.go", "sed.go", "img.bin", "huge.dat"}; !slices.Equal(names, want) {
		t.Errorf("modified = %v, want %v", names, want)
	}
	if len(created) != 1 || created[0].Path != "gen/out.go" || created[0].LinesChanged != 1 {
		t.Errorf("created = %+v, want gen/out.go with one line", created)
	}
}

// trackerOfAFileGrownTooLarge is a tracker that snapshotted big.txt
// small, after which the file grew past the snapshot bound.
func trackerOfAFileGrownTooLarge(t *testing.T) (*Tracker, string) {
	t.Helper()
	root := t.TempDir()
	big := filepath.Join(root, "big.txt")
	write(t, big, "small\n", 0o644)
	tr := NewTracker(root, "x")
	tr.Record([]File{{Path: big, Existed: true, Mode: 0o644, Content: []byte("small\n")}})
	if err := os.WriteFile(big, []byte(strings.Repeat("x", maxSnapshotBytes+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr, big
}

// A file that grew past the snapshot bound since its snapshot is one
// line in the diff, not skipped: the gates must know it changed.
func TestDiffOfAFileTooLargeNow(t *testing.T) {
	tr, _ := trackerOfAFileGrownTooLarge(t)
	const line = "Binary or too large, not shown: big.txt (it is larger than 16 MiB)\n"
	if got := tr.Diff(tr.Changed()); got != line {
		t.Errorf("Diff = %q, want %q", got, line)
	}
	first, seen := tr.DiffSince(tr.Changed(), nil)
	if first != line {
		t.Errorf("DiffSince = %q, want %q", first, line)
	}
	if again, _ := tr.DiffSince(tr.Changed(), seen); again != "" {
		t.Errorf("DiffSince of an unchanged big file = %q, want nothing", again)
	}
}

// A file a command replaced by a symbolic link cannot be read for a diff
// (the tracker never follows links): it is one line, not left out.
func TestDiffOfAFileNowALink(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a.txt")
	write(t, filepath.Join(root, "elsewhere.txt"), "outside\n", 0o644)
	tr := NewTracker(root, "x")
	tr.Record([]File{{Path: a, Existed: true, Mode: 0o644, Content: []byte("alpha\n")}})
	if err := os.Symlink("elsewhere.txt", a); err != nil {
		t.Fatal(err)
	}
	got := tr.Diff(tr.Changed())
	if !strings.HasPrefix(got, "Binary or too large, not shown: a.txt (it cannot be read now: ") || strings.Count(got, "\n") != 1 || strings.Contains(got, "outside") {
		t.Errorf("Diff = %q, want one line for a.txt, without the link target's content", got)
	}
	mod, _ := tr.FileChanges(tr.Changed())
	if len(mod) != 1 || mod[0].Diff != got {
		t.Errorf("FileChanges = %+v, want a.txt with the same line", mod)
	}
}

// Specialists write and run commands in parallel on one change set:
// Changed, Diff and FileChanges may be called meanwhile (run with -race),
// and in the end every file is listed once, the write tools' first.
func TestChangedWhileWritesAndCommandsRun(t *testing.T) {
	root := t.TempDir()
	tr := NewTracker(root, "x")
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			p := filepath.Join(root, fmt.Sprintf("w%d.go", i))
			if err := tr.BeforeWrite(p); err != nil {
				t.Error(err)
			}
			write(t, p, "package w\n", 0o644)
		}()
		go func() {
			defer wg.Done()
			p := filepath.Join(root, fmt.Sprintf("c%d.go", i))
			write(t, p, "package c\n", 0o644)
			tr.Record([]File{{Path: p, Mode: 0o644}})
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			ch := tr.Changed()
			tr.Diff(ch)
			tr.DiffSince(ch, nil)
			tr.FileChanges(ch)
		}
	}()
	wg.Wait()
	<-done
	got := tr.Changed()
	if len(got) != 2*n {
		t.Fatalf("Changed() = %d files, want %d: %v", len(got), 2*n, got)
	}
	for i, p := range got {
		if wrote := strings.HasPrefix(filepath.Base(p), "w"); wrote != (i < n) {
			t.Fatalf("Changed() = %v: the write tools' files come first", got)
		}
	}
}

// A file too large in one round and small again in the next is diffed
// from its snapshot then, not from the stand-in of the round before.
func TestDiffSinceAfterAFileShrank(t *testing.T) {
	tr, big := trackerOfAFileGrownTooLarge(t)
	_, seen := tr.DiffSince(tr.Changed(), nil)
	write(t, big, "small again\n", 0o644)
	got, _ := tr.DiffSince(tr.Changed(), seen)
	if !strings.Contains(got, "-small\n+small again\n") || strings.Contains(got, "Binary") {
		t.Errorf("DiffSince after the file shrank = %q, want the diff from its snapshot", got)
	}
}
