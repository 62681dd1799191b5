package worktree

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// project makes a repository with a commit, then uncommitted changes of
// every kind: a modified file, a staged new file, a deleted file, an
// untracked file, an ignored file and a binary file.
func project(t *testing.T) string {
	t.Helper()
	needGit(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run(t, root, "init", "-q", "-b", "main")
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")
	write(t, filepath.Join(root, "gone.txt"), "bye\n")
	write(t, filepath.Join(root, ".gitignore"), "*.log\n")
	write(t, filepath.Join(root, "crlf.txt"), "x\r\ny\r\n")
	run(t, root, "add", "-A")
	run(t, root, "commit", "-q", "-m", "init")
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	write(t, filepath.Join(root, "staged.txt"), "staged\n")
	run(t, root, "add", "staged.txt")
	if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "dir", "untracked.txt"), "untracked\n")
	write(t, filepath.Join(root, "debug.log"), "ignored\n")
	if err := os.WriteFile(filepath.Join(root, "bin.dat"), []byte{0, 1, 2, 0xff}, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func manager(t *testing.T) *Manager {
	t.Helper()
	state, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{StateDir: state})
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestCreateCopiesUncommittedAndUntracked(t *testing.T) {
	root := project(t)
	m := manager(t)
	objectsBefore := run(t, root, "count-objects")
	tr, err := m.Create(t.Context(), root, "task1")
	if err != nil {
		t.Fatal(err)
	}
	if workspaceInside(tr.Root, root) || !strings.HasPrefix(tr.Root, m.Dir()) {
		t.Fatalf("worktree %s is not under the state dir %s", tr.Root, m.Dir())
	}
	for name, want := range map[string]string{
		"a.txt": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n", "staged.txt": "staged\n",
		"dir/untracked.txt": "untracked\n", "crlf.txt": "x\r\ny\r\n", "bin.dat": "\x00\x01\x02\xff",
	} {
		if got := read(t, filepath.Join(tr.Root, name)); got != want {
			t.Errorf("%s in the worktree = %q, want %q", name, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(tr.Root, "bin.dat")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin.dat lost its exec bit: %v %v", fi, err)
	}
	for _, name := range []string{"gone.txt", "debug.log"} {
		if _, err := os.Lstat(filepath.Join(tr.Root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is in the worktree (deleted or ignored in the project): %v", name, err)
		}
	}
	if !tr.Dirty {
		t.Error("Dirty is false although the project has uncommitted changes")
	}
	if !strings.Contains(run(t, root, "worktree", "list", "--porcelain"), tr.work) {
		t.Error("git worktree list does not show the worktree")
	}
	// The project's repository gained no object: snapshots are private.
	if out := run(t, root, "count-objects"); out != objectsBefore {
		t.Errorf("the project's repository gained objects: %q, before %q", out, objectsBefore)
	}
	// No patch before any change.
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 0 {
		t.Errorf("patch of an untouched worktree: %+v", p.Files)
	}
	if err := tr.Remove(t.Context()); err != nil {
		t.Fatal(err)
	}
	if out := run(t, root, "worktree", "list", "--porcelain"); strings.Contains(out, tr.work) {
		t.Errorf("git worktree list still shows the removed worktree:\n%s", out)
	}
	if entries, _ := os.ReadDir(m.Dir()); len(entries) != 0 {
		t.Errorf("the state dir keeps %d entries after Remove", len(entries))
	}
	// The project itself is untouched.
	if got := read(t, filepath.Join(root, "debug.log")); got != "ignored\n" {
		t.Errorf("debug.log = %q", got)
	}
}

func workspaceInside(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

func TestPatchCarriesAddModifyDelete(t *testing.T) {
	root := project(t)
	m := manager(t)
	tr, err := m.Create(t.Context(), root, "task2")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Root, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	write(t, filepath.Join(tr.Root, "new", "file.go"), "package x\n")
	if err := os.Remove(filepath.Join(tr.Root, "staged.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Root, "trace.log"), "ignored output\n")
	if err := os.WriteFile(filepath.Join(tr.Root, "bin.dat"), []byte{0, 9}, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []messages.PatchFile{
		{Path: "a.txt", Op: "modify", Base: []byte("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n"), New: []byte("ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")},
		{Path: "bin.dat", Op: "modify", Base: []byte{0, 1, 2, 0xff}, New: []byte{0, 9}, Exec: true},
		{Path: "new/file.go", Op: "add", New: []byte("package x\n")},
		{Path: "staged.txt", Op: "delete", Base: []byte("staged\n")},
	}
	if diff := cmp.Diff(want, p.Files); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(p.Base, "+dirty") {
		t.Errorf("base %q does not say the tree was dirty", p.Base)
	}
	// It survives the trip through a message (JSON), bytes exact.
	raw, _ := json.Marshal(p)
	var back messages.Patch
	if err := json.Unmarshal(raw, &back); err != nil || !cmp.Equal(p.Files, back.Files) {
		t.Errorf("patch does not survive JSON: %v", err)
	}
}

func TestPatchOfSubdirectoryProject(t *testing.T) {
	root := project(t)
	sub := filepath.Join(root, "dir")
	m := manager(t)
	tr, err := m.Create(t.Context(), sub, "task3")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(tr.Root, "untracked.txt")); got != "untracked\n" {
		t.Fatalf("Root is not the project's directory in the worktree: %q", got)
	}
	write(t, filepath.Join(tr.Root, "untracked.txt"), "changed\n")
	write(t, filepath.Join(tr.work, "a.txt"), "outside\n")
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 || p.Files[0].Path != "untracked.txt" || len(p.Skipped) != 1 {
		t.Errorf("patch = %+v, skipped %v", p.Files, p.Skipped)
	}
}

func TestNotAGitRepository(t *testing.T) {
	needGit(t)
	m := manager(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	_, err := m.Create(t.Context(), dir, "x")
	if !errors.Is(err, ErrNotGit) {
		t.Fatalf("Create in a plain directory: %v, want ErrNotGit", err)
	}
	if entries, _ := os.ReadDir(m.Dir()); len(entries) != 0 {
		t.Errorf("a failed Create left %d entries", len(entries))
	}
}

func applyOpts(root string, tr *checkpoint.Tracker) ApplyOptions {
	return ApplyOptions{Root: root, Locks: &tool.PathLocks{}, BeforeWrite: tr.BeforeWrite, IntendWrite: tr.IntendWrite, IntendDelete: tr.IntendDelete}
}

func TestApplyMergesCleanAndUndoRestores(t *testing.T) {
	root := project(t)
	m := manager(t)
	tr, err := m.Create(t.Context(), root, "task4")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Root, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	write(t, filepath.Join(tr.Root, "added.txt"), "added\n")
	_ = os.Remove(filepath.Join(tr.Root, "staged.txt"))
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile the project changed a.txt elsewhere.
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\neight (uncommitted)\n")
	before := snapshotDir(t, root)
	ck := checkpoint.NewTracker(root, "apply")
	files, err := Apply(t.Context(), p, applyOpts(root, ck))
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\neight (uncommitted)\n" {
		t.Errorf("merged a.txt = %q", got)
	}
	if got := read(t, filepath.Join(root, "added.txt")); got != "added\n" {
		t.Errorf("added.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "staged.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staged.txt was not deleted: %v", err)
	}
	slices.Sort(files)
	if want := []string{filepath.Join(root, "a.txt"), filepath.Join(root, "added.txt"), filepath.Join(root, "staged.txt")}; !slices.Equal(files, want) {
		t.Errorf("files = %v, want %v", files, want)
	}
	if _, err := checkpoint.Restore(ck.Files(), []string{root}, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if diff := cmp.Diff(before, snapshotDir(t, root)); diff != "" {
		t.Errorf("undo did not restore the project byte for byte (-before +after):\n%s", diff)
	}
}

func TestApplyConflictTouchesNothing(t *testing.T) {
	root := project(t)
	m := manager(t)
	tr, err := m.Create(t.Context(), root, "task5")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Root, "a.txt"), "one\nTWO by the specialist\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	write(t, filepath.Join(tr.Root, "fresh.txt"), "fresh\n")
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "a.txt"), "one\nTWO by someone else\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	before := snapshotDir(t, root)
	_, err = Apply(t.Context(), p, applyOpts(root, checkpoint.NewTracker(root, "x")))
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"a.txt"}) {
		t.Fatalf("Apply = %v, want a conflict naming a.txt", err)
	}
	if diff := cmp.Diff(before, snapshotDir(t, root)); diff != "" {
		t.Errorf("a conflicting patch changed the project (-before +after):\n%s", diff)
	}
}

func TestApplyBinaryAndDeleteConflicts(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(root, "b.bin"), "\x00theirs")
	write(t, filepath.Join(root, "d.txt"), "changed by the project\n")
	p := &messages.Patch{Files: []messages.PatchFile{
		{Path: "b.bin", Op: "modify", Base: []byte("\x00base"), New: []byte("\x00new")},
		{Path: "d.txt", Op: "delete", Base: []byte("original\n")},
		{Path: "gone.txt", Op: "modify", Base: []byte("x\n"), New: []byte("y\n")},
	}}
	_, err := Apply(t.Context(), p, applyOpts(root, checkpoint.NewTracker(root, "x")))
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"b.bin", "d.txt", "gone.txt"}) {
		t.Fatalf("Apply = %v", err)
	}
	for _, bad := range []string{"../x", ".git/config", "/etc/passwd"} {
		_, err := Apply(t.Context(), &messages.Patch{Files: []messages.PatchFile{{Path: bad, Op: "add", New: []byte("x")}}}, ApplyOptions{Root: root})
		if err == nil {
			t.Errorf("Apply wrote %q", bad)
		}
	}
}

// snapshotDir maps every file under root (not .git) to its mode and
// content.
func snapshotDir(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			fi, _ := d.Info()
			rel, _ := filepath.Rel(root, p)
			out[rel] = fi.Mode().String() + " " + read(t, p)
		}
		return nil
	})
	return out
}

func TestSweepRemovesOrphansOfDeadProcesses(t *testing.T) {
	root := project(t)
	m := manager(t)
	tr, err := m.Create(t.Context(), root, "orphan")
	if err != nil {
		t.Fatal(err)
	}
	// Pretend a killed process made it: a PID that is not running.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(m.Dir(), "orphan", ownerFile)
	var o owner
	_ = json.Unmarshal([]byte(read(t, marker)), &o)
	o.PID = cmd.Process.Pid
	raw, _ := json.Marshal(o)
	write(t, marker, string(raw))
	// The user's own worktree is never touched.
	mine := filepath.Join(t.TempDir(), "mine")
	run(t, root, "worktree", "add", "-q", "--detach", mine)
	// The live one of this process stays.
	live, err := m.Create(t.Context(), root, "live")
	if err != nil {
		t.Fatal(err)
	}
	other := New(Options{StateDir: filepath.Dir(m.Dir())}) // a restarted Odin
	removed, err := other.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{filepath.Join(m.Dir(), "orphan")}) {
		t.Errorf("Sweep removed %v", removed)
	}
	list := run(t, root, "worktree", "list", "--porcelain")
	if strings.Contains(list, tr.work) || !strings.Contains(list, live.work) || !strings.Contains(list, mine) {
		t.Errorf("after Sweep, git worktree list:\n%s", list)
	}
}

// The same life cycle with git confined by bubblewrap, as Odin runs it:
// the project and its .git read-only but for the repository's worktree
// records, the state directory writable only where the worktree lives.
func TestLifeCycleInSandbox(t *testing.T) {
	root := project(t)
	state, _ := filepath.EvalSymlinks(t.TempDir())
	l := sandbox.New(sandbox.Options{Mode: sandbox.ModeBubblewrap, Root: root, Protected: []string{state}})
	if st := l.Status(); st.Refuse {
		t.Skipf("bubblewrap is not usable here: %s", st)
	}
	m := New(Options{StateDir: state, Launcher: l})
	t.Cleanup(func() { _ = m.Close() })
	tr, err := m.Create(t.Context(), root, "boxed")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tr.Root, "a.txt"), "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight (uncommitted)\n")
	p, err := tr.Patch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\neight (uncommitted)\n")
	if _, err := m.Apply(t.Context(), p, applyOpts(root, checkpoint.NewTracker(root, "x"))); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, "a.txt")); got != "ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\neight (uncommitted)\n" {
		t.Errorf("merged in the sandbox: %q", got)
	}
	if err := tr.Remove(t.Context()); err != nil {
		t.Fatal(err)
	}
	if list := run(t, root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("git worktree list after Remove:\n%s", list)
	}
}

// BenchmarkLifeCycle measures one isolated task's overhead on a small
// dirty repository: create the worktree, change a file, extract the
// patch, apply it to the project, remove the worktree.
func BenchmarkLifeCycle(b *testing.B) {
	needGitB(b)
	root := benchProject(b)
	state, _ := filepath.EvalSymlinks(b.TempDir())
	m := New(Options{StateDir: state})
	for i := 0; b.Loop(); i++ {
		tr, err := m.Create(b.Context(), root, "bench"+strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tr.Root, "f0.txt"), []byte("changed "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		p, err := tr.Patch(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Apply(b.Context(), p, ApplyOptions{Root: root}); err != nil {
			b.Fatal(err)
		}
		if err := tr.Remove(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

func needGitB(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
}

// benchProject is a repository of 200 small files with one uncommitted.
func benchProject(b *testing.B) string {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	gitB := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitB("init", "-q", "-b", "main")
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(root, "f"+strconv.Itoa(i)+".txt"), []byte("line "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitB("add", "-A")
	gitB("commit", "-q", "-m", "init")
	if err := os.WriteFile(filepath.Join(root, "f1.txt"), []byte("dirty\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}
