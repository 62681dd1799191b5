package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tmp, "proj")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(tmp, "alias")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ base, path, want string }{
		{root, "sub/new.go", filepath.Join(root, "sub", "new.go")},
		{root, "out/x", filepath.Join(outside, "x")},
		// The kernel follows "out" before "..": out/.. is tmp, not root.
		{root, "out/../secret", filepath.Join(tmp, "secret")},
		{filepath.Join(tmp, "alias"), "sub", filepath.Join(root, "sub")},
		{"/nowhere", filepath.Join(tmp, "alias", "a", "b"), filepath.Join(root, "a", "b")},
	}
	for _, c := range cases {
		got, err := Resolve(c.base, c.path)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%s, %s) = %s, %v; want %s", c.base, c.path, got, err, c.want)
		}
	}
	if _, err := Resolve(root, "a\x00b"); err == nil {
		t.Error("a NUL byte was accepted")
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		dir, path string
		want      bool
	}{
		{"/work/proj", "/work/proj", true},
		{"/work/proj", "/work/proj/a/b", true},
		{"/work/proj", "/work/proj_evil/a", false},
		{"/work/proj", "/work", false},
		{"/work/proj", "/work/proj/../other", false},
		{"/work/proj", "/work/proj/..foo", true},
	}
	for _, c := range cases {
		if got := Within(c.dir, filepath.Clean(c.path)); got != c.want {
			t.Errorf("Within(%s, %s) = %v, want %v", c.dir, c.path, got, c.want)
		}
	}
}

func TestGitRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(base, "repo", ".git", "HEAD"), "ref: refs/heads/main\n")
	mk(filepath.Join(base, "repo", "a", "b", "x"), "")
	mk(filepath.Join(base, "fake", ".git"), "")
	mk(filepath.Join(base, "fake", "p", "x"), "")
	mk(filepath.Join(base, "dir", ".git", "config"), "") // a .git dir without HEAD
	mk(filepath.Join(base, "dir", "p", "x"), "")
	mk(filepath.Join(base, "wt", ".git"), "gitdir: ../repo/.git\n")
	mk(filepath.Join(base, "home", ".git", "HEAD"), "ref: refs/heads/main\n")
	mk(filepath.Join(base, "home", "src", "x"), "")

	cases := []struct {
		dir, stop, want string
	}{
		{"repo/a/b", "", "repo"},
		{"fake/p", "", ""},
		{"dir/p", "", ""},
		{"wt", "", "wt"},
		{"home/src", "home", ""},
		{"home/src", "", "home"},
		{"home", "home", "home"},
	}
	for _, c := range cases {
		stop := ""
		if c.stop != "" {
			stop = filepath.Join(base, c.stop)
		}
		got, ok := GitRoot(filepath.Join(base, c.dir), stop)
		want := ""
		if c.want != "" {
			want = filepath.Join(base, c.want)
		}
		// Above base there may be a real repository (the test's temp dir
		// is not one): only roots inside base matter here.
		if !ok || !Within(base, got) {
			got = ""
		}
		if got != want {
			t.Errorf("GitRoot(%s, %q) = %q, want %q", c.dir, c.stop, got, want)
		}
	}
}
