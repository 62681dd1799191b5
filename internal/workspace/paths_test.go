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
