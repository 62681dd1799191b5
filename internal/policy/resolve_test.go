package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
)

func configPerms(allowed, forbidden []string) config.Permissions {
	return config.Permissions{AllowedCommands: allowed, ForbiddenCommands: forbidden}
}

func TestResolvePath(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(tmp, "a", "b"), 0o755))
	must(os.MkdirAll(filepath.Join(tmp, "other", "x"), 0o755))
	must(os.Symlink(filepath.Join(tmp, "other", "x"), filepath.Join(tmp, "a", "link")))
	must(os.Symlink("b", filepath.Join(tmp, "a", "rel")))
	must(os.Symlink("missing/target", filepath.Join(tmp, "a", "dangling")))
	must(os.Symlink("loop2", filepath.Join(tmp, "loop1")))
	must(os.Symlink("loop1", filepath.Join(tmp, "loop2")))
	base := filepath.Join(tmp, "a")
	cases := []struct {
		in, want string
	}{
		{"b", filepath.Join(tmp, "a", "b")},
		{"b/new/file.txt", filepath.Join(tmp, "a", "b", "new", "file.txt")},
		{"./b/../b", filepath.Join(tmp, "a", "b")},
		{"link", filepath.Join(tmp, "other", "x")},
		// The kernel follows link before "..": other/x/.. is other.
		{"link/..", filepath.Join(tmp, "other")},
		{"link/../../a", filepath.Join(tmp, "a")},
		{"rel/../link", filepath.Join(tmp, "other", "x")},
		{"dangling/f", filepath.Join(tmp, "a", "missing", "target", "f")},
		{filepath.Join(tmp, "a", "link", "new"), filepath.Join(tmp, "other", "x", "new")},
		{"../../../../../../../..", "/"},
	}
	for _, c := range cases {
		got, err := resolvePath(base, c.in)
		if err != nil {
			t.Errorf("resolvePath(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("resolvePath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "a\x00b", filepath.Join(tmp, "loop1", "x")} {
		if _, err := resolvePath(base, bad); err == nil {
			t.Errorf("resolvePath(%q) succeeded, want an error", bad)
		}
	}
	if _, err := resolvePath("relative", "x"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative base: err %v", err)
	}
}
