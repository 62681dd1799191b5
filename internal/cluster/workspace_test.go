package cluster

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// denyEnv denies reading .env files.
type denyEnv struct{}

func (denyEnv) Check(path string) (string, bool) { return "env", filepath.Base(path) == ".env" }
func (denyEnv) Hides(path string, _ fs.FileMode) bool {
	return filepath.Base(path) == ".env"
}

// A worker's tree holds the session's commit plus its uncommitted
// changes — a modified tracked file, a new untracked one, a deletion and
// a binary file — and nothing the session may not read.
func TestSnapshotPrepare(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	gitRun(t, root, "init", "-q")
	write(t, filepath.Join(root, "a.go"), "package a\n")
	write(t, filepath.Join(root, "gone.go"), "package gone\n")
	write(t, filepath.Join(root, ".gitignore"), "*.log\n")
	gitRun(t, root, "add", "-A")
	gitRun(t, root, "commit", "-q", "-m", "one")
	write(t, filepath.Join(root, "a.go"), "package a\n// DIRTY_ONLY\n")
	write(t, filepath.Join(root, "sub", "new.go"), "package sub // UNTRACKED_ONLY\n")
	write(t, filepath.Join(root, "bin.dat"), "\x00\x01\x02binary")
	write(t, filepath.Join(root, ".env"), "SECRET=canary-7f3a\n")
	write(t, filepath.Join(root, "x.log"), "ignored\n")
	if err := os.Remove(filepath.Join(root, "gone.go")); err != nil {
		t.Fatal(err)
	}
	indexBefore, _ := os.ReadFile(filepath.Join(root, ".git", "index"))

	repo, err := Snapshot(t.Context(), root, denyEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(repo.Patch), "canary-7f3a") {
		t.Error("the patch carries a file the session may not read")
	}
	if after, _ := os.ReadFile(filepath.Join(root, ".git", "index")); string(after) != string(indexBefore) {
		t.Error("Snapshot changed the user's index")
	}

	ws := &Workspaces{Dir: t.TempDir()}
	defer ws.Close()
	tree, release, err := ws.Prepare(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.go": "package a\n// DIRTY_ONLY\n", "sub/new.go": "package sub // UNTRACKED_ONLY\n", "bin.dat": "\x00\x01\x02binary", ".gitignore": "*.log\n"}
	got := map[string]string{}
	_ = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() || d.Name() == ".git" {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(tree, p)
		got[rel] = string(b)
		return nil
	})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	// The same state again shares the tree; another one gets its own.
	tree2, release2, err := ws.Prepare(t.Context(), repo)
	if err != nil || tree2 != tree {
		t.Errorf("second Prepare: %s, %v; want %s", tree2, err, tree)
	}
	release2()
	release()
	write(t, filepath.Join(root, "a.go"), "package a\n// OTHER\n")
	repo3, err := Snapshot(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	tree3, release3, err := ws.Prepare(t.Context(), repo3)
	if err != nil {
		t.Fatal(err)
	}
	defer release3()
	if tree3 == tree {
		t.Error("a different patch got the same tree")
	}
	if b, _ := os.ReadFile(filepath.Join(tree3, "a.go")); string(b) != "package a\n// OTHER\n" {
		t.Errorf("a.go in the new tree = %q", b)
	}
}

// A worker that was killed leaves its trees behind; the next node on the
// same state directory removes them, and never those of a live one.
func TestWorkspacesOrphans(t *testing.T) {
	dir := t.TempDir()
	live := &Workspaces{Dir: dir}
	if err := live.open(); err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	orphan := filepath.Join(dir, "nodes", "n-dead")
	write(t, filepath.Join(orphan, "trees", "x", "f"), "left behind")
	write(t, orphan+".lock", "")
	next := &Workspaces{Dir: dir}
	if err := next.open(); err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphan %s is still there (%v)", orphan, err)
	}
	if _, err := os.Stat(live.own); err != nil {
		t.Errorf("the live node's directory went: %v", err)
	}
}

// Nodes that start together on one state directory each keep their own
// directory: none takes another's lock for an orphan's while it is
// being set up (the lock failed with EAGAIN, or the directory was swept).
func TestWorkspacesStartTogether(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	for round := 0; round < 20; round++ {
		nodes := make([]*Workspaces, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range nodes {
			nodes[i] = &Workspaces{Dir: dir}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = nodes[i].open()
			}(i)
		}
		wg.Wait()
		for i, w := range nodes {
			if errs[i] != nil {
				t.Fatalf("round %d: node %d: %v", round, i, errs[i])
			}
			if _, err := os.Stat(w.own); err != nil {
				t.Fatalf("round %d: node %d lost its directory: %v", round, i, err)
			}
		}
		for _, w := range nodes {
			w.Close()
		}
	}
}

// What a remote specialist reports names the session's files, not the
// worker's tree.
func TestPathMapper(t *testing.T) {
	tree, root := "/state/remote/nodes/n-1/trees/k/abc-def", "/home/u/proj"
	m := newPathMapper(tree, root)
	res, _ := json.Marshal(messages.SearchResult{Summary: "in " + tree + "/a.go", Findings: []messages.Finding{{File: tree + "/a.go", Line: 3}}})
	r := m.report(&messages.Report{TaskID: "t", Summary: "see " + tree + "/a.go:3", Result: res, Files: []string{tree + "/b.go"}, Error: ""})
	if strings.Contains(r.Summary+string(r.Result)+strings.Join(r.Files, ""), tree) {
		t.Fatalf("the worker's tree is left in %+v", r)
	}
	var sr messages.SearchResult
	if err := json.Unmarshal(r.Result, &sr); err != nil {
		t.Fatal(err)
	}
	if sr.Findings[0].File != root+"/a.go" || r.Files[0] != root+"/b.go" || r.Summary != "see "+root+"/a.go:3" {
		t.Errorf("mapped: %+v / %+v", r, sr)
	}
	p := m.progress(&messages.AgentProgress{Activities: []string{"Grep in " + tree}})
	if p.Activities[0] != "Grep in "+root {
		t.Errorf("progress: %q", p.Activities)
	}
	// A brief names the session's files; the specialist opens the tree's.
	// Only whole path components are rewritten.
	d := m.reverse().delegate(&messages.Delegate{Brief: "read " + root + "/a.go and " + root + "2/b.go", Files: []string{root + "/c.go"}, ContextText: root + ":"})
	want := &messages.Delegate{Brief: "read " + tree + "/a.go and " + root + "2/b.go", Files: []string{tree + "/c.go"}, ContextText: tree + ":"}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("delegate (-want +got):\n%s", diff)
	}
}

// A session rooted in a directory of its repository: the commit comes
// from the top level and the task works in the same directory of the
// tree.
func TestSnapshotSubdirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("HOME", t.TempDir())
	top := t.TempDir()
	gitRun(t, top, "init", "-q")
	write(t, filepath.Join(top, "svc", "a.go"), "package a\n")
	gitRun(t, top, "add", "-A")
	gitRun(t, top, "commit", "-q", "-m", "one")
	write(t, filepath.Join(top, "svc", "b.go"), "package a // NEW\n")
	repo, err := Snapshot(t.Context(), filepath.Join(top, "svc"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if repo.Dir != "svc" || repo.URLs[0] != top {
		t.Fatalf("repo dir %q, url %q; want svc, %s", repo.Dir, repo.URLs[0], top)
	}
	ws := &Workspaces{Dir: t.TempDir()}
	defer ws.Close()
	tree, release, err := ws.Prepare(t.Context(), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if b, err := os.ReadFile(filepath.Join(tree, "svc", "b.go")); err != nil || string(b) != "package a // NEW\n" {
		t.Errorf("svc/b.go in the tree: %q %v", b, err)
	}
	bad := *repo
	bad.Dir = "../.."
	if _, _, err := ws.Prepare(t.Context(), &bad); err == nil {
		t.Error("a directory outside the repository was taken")
	}
}

// A repository URL comes from another node: git's ext:: transport, which
// runs a command, is never used, whatever the URL and the user's git
// config say.
func TestPrepareRefusesCommandTransports(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	write(t, filepath.Join(home, ".gitconfig"), "[protocol \"ext\"]\n\tallow = always\n[protocol]\n\tallow = always\n")
	canary := filepath.Join(t.TempDir(), "canary")
	ws := &Workspaces{Dir: t.TempDir()}
	defer ws.Close()
	repo := &Repo{URLs: []string{"ext::sh -c touch% " + canary}, Commit: strings.Repeat("a", 40)}
	if _, _, err := ws.Prepare(t.Context(), repo); err == nil {
		t.Error("Prepare fetched from an ext:: URL")
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the ext:: transport ran its command")
	}
}
