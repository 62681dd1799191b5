package trust

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTrustStore(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	project := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := NewStore(state, func() time.Time { return now })
	fp := "3f2a9c"

	if s.Trusted(project, fp) {
		t.Fatal("trusted before Trust")
	}
	if s.Trusted(project, "") {
		t.Fatal("an empty fingerprint is trusted")
	}
	if err := s.Trust(link, fp); err != nil {
		t.Fatal(err)
	}
	if !s.Trusted(project, fp) {
		t.Fatal("not trusted after Trust (through a symlink to the same root)")
	}
	if s.Trusted(project, "77b01e") {
		t.Fatal("a changed configuration is still trusted")
	}
	if s.Trusted(t.TempDir(), fp) {
		t.Fatal("another project is trusted")
	}
	// Another store on the same file sees the entry.
	if !NewStore(state, nil).Trusted(project, fp) {
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
	s := NewStore(state, nil)
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

func TestTrustStorePrevious(t *testing.T) {
	s := NewStore(t.TempDir(), nil)
	root := t.TempDir()
	if _, ok := s.Previous(root); ok {
		t.Fatal("an unknown project has no previous trust")
	}
	if err := s.Trust(root, "fp1", `quality.test = "make test"`); err != nil {
		t.Fatal(err)
	}
	items, ok := s.Previous(root)
	if !ok || len(items) != 1 || items[0] != `quality.test = "make test"` {
		t.Errorf("Previous = %q, %v", items, ok)
	}
	if s.Trusted(root, "fp2") {
		t.Error("a changed fingerprint is not trusted")
	}
}

// TestTrustStorePins: pins round-trip by entry; a record written before
// pinning (Trust, or an old file without the field) reports none, so its
// entries that execute project files ask for trust again, while the
// project's settings stay trusted.
func TestTrustStorePins(t *testing.T) {
	state := t.TempDir()
	project := t.TempDir()
	s := NewStore(state, nil)
	if _, ok := s.Pinned(project); ok {
		t.Fatal("pins for a project never trusted")
	}
	if err := s.Trust(project, "fp"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Pinned(project); ok {
		t.Fatal("a record without pins reports pins")
	}
	pins := map[string]Pins{"MCP server 'x'": {"srv.py": "sha256:ab"}, "hook Stop `true`": {}}
	if err := s.TrustPinned(project, "fp", pins, "item"); err != nil {
		t.Fatal(err)
	}
	got, ok := NewStore(state, nil).Pinned(project)
	if !ok || got["MCP server 'x'"]["srv.py"] != "sha256:ab" || got["hook Stop `true`"] == nil {
		t.Fatalf("Pinned = %v, %v", got, ok)
	}
	if !s.Trusted(project, "fp") {
		t.Fatal("TrustPinned does not trust")
	}
	// A file written by an older Odin (no "pinned" key) still loads.
	old := `{"version": 1, "projects": {"` + canonicalRoot(project) + `": {"fingerprint": "fp", "trusted_at": "2026-01-01T00:00:00Z"}}}`
	if err := os.WriteFile(s.Path(), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if !s.Trusted(project, "fp") {
		t.Fatal("an old record is no longer trusted")
	}
	if _, ok := s.Pinned(project); ok {
		t.Fatal("an old record reports pins")
	}
}
