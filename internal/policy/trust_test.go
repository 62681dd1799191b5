package policy

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
)

func TestTrustStore(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	project := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := NewTrustStore(state, func() time.Time { return now })
	fp := Fingerprint(config.Permissions{AllowedCommands: []string{"go test *"}}, nil)

	if s.Trusted(project, fp) {
		t.Fatal("trusted before Trust")
	}
	if err := s.Trust(link, fp); err != nil {
		t.Fatal(err)
	}
	if !s.Trusted(project, fp) {
		t.Fatal("not trusted after Trust (through a symlink to the same root)")
	}
	if s.Trusted(project, Fingerprint(config.Permissions{AllowedCommands: []string{"*"}}, nil)) {
		t.Fatal("a changed configuration is still trusted")
	}
	if s.Trusted(t.TempDir(), fp) {
		t.Fatal("another project is trusted")
	}
	// Another store on the same file sees the entry.
	if !NewTrustStore(state, nil).Trusted(project, fp) {
		t.Fatal("trust not persisted")
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file mode %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(state)
	if len(entries) != 1 {
		t.Errorf("state dir holds %d entries, want only trust.json", len(entries))
	}
	if err := s.Revoke(project); err != nil {
		t.Fatal(err)
	}
	if s.Trusted(project, fp) {
		t.Fatal("trusted after Revoke")
	}
	if err := s.Trust(project, ""); err == nil {
		t.Fatal("empty fingerprint accepted")
	}
}

func TestTrustStoreCorruptFile(t *testing.T) {
	state := t.TempDir()
	s := NewTrustStore(state, nil)
	if err := os.WriteFile(s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.Trusted(t.TempDir(), "sha256:x") {
		t.Fatal("corrupt store trusts")
	}
	if err := s.Trust(t.TempDir(), "sha256:x"); err == nil {
		t.Fatal("Trust overwrote a corrupt store")
	}
	data, _ := os.ReadFile(s.Path())
	if string(data) != "{not json" {
		t.Fatalf("corrupt store was changed: %q", data)
	}
}

func TestFingerprint(t *testing.T) {
	base := config.Permissions{AllowedCommands: []string{"go test *", "make"}, AdditionalDirs: []string{"/a", "/b"}}
	hooks := map[string][]config.Hook{PreToolUse: {{Command: "a"}, {Command: "b"}}}
	fp := Fingerprint(base, hooks)
	same := []struct {
		name  string
		perms config.Permissions
		hooks map[string][]config.Hook
	}{
		{"allowed order", config.Permissions{AllowedCommands: []string{"make", "go test *"}, AdditionalDirs: []string{"/b", "/a"}}, hooks},
		{"forbidden narrows", config.Permissions{AllowedCommands: base.AllowedCommands, AdditionalDirs: base.AdditionalDirs, ForbiddenCommands: []string{"rm *"}}, hooks},
	}
	for _, c := range same {
		if got := Fingerprint(c.perms, c.hooks); got != fp {
			t.Errorf("%s: fingerprint changed", c.name)
		}
	}
	differ := []struct {
		name  string
		perms config.Permissions
		hooks map[string][]config.Hook
	}{
		{"new allowed command", config.Permissions{AllowedCommands: []string{"go test *", "make", "curl *"}, AdditionalDirs: base.AdditionalDirs}, hooks},
		{"new dir", config.Permissions{AllowedCommands: base.AllowedCommands, AdditionalDirs: []string{"/a", "/b", "/"}}, hooks},
		{"hook order", base, map[string][]config.Hook{PreToolUse: {{Command: "b"}, {Command: "a"}}}},
		{"hook event", base, map[string][]config.Hook{PostToolUse: {{Command: "a"}, {Command: "b"}}}},
		{"hook timeout", base, map[string][]config.Hook{PreToolUse: {{Command: "a", Timeout: time.Minute}, {Command: "b"}}}},
		{"no hooks", base, nil},
	}
	seen := map[string]string{fp: "base"}
	for _, c := range differ {
		got := Fingerprint(c.perms, c.hooks)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: same fingerprint as %s", c.name, prev)
		}
		seen[got] = c.name
	}
	if diff := cmp.Diff("sha256:", fp[:7]); diff != "" {
		t.Errorf("prefix (-want +got):\n%s", diff)
	}
}
