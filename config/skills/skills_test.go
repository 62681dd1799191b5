package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeSkill(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name, "SKILL.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoad: skills are found a folder each, the earlier directory wins a
// name, and a broken SKILL.md or one that leads out of its directory is a
// warning naming the file, never an error and never loaded.
func TestLoad(t *testing.T) {
	project, user, outside := t.TempDir(), t.TempDir(), t.TempDir()
	style := writeSkill(t, project, "style", "---\nname: style\ndescription: Go style\n  rules.\n---\nUse gofmt.\n")
	writeSkill(t, user, "style", "---\ndescription: the user's style\n---\nbody\n")
	named := writeSkill(t, user, "folder", "---\ndescription: named by its folder\nallowed-tools: [Read]\n---\nx\n")
	broken := writeSkill(t, project, "broken", "no front matter\n")
	badYAML := writeSkill(t, project, "badyaml", "---\nname: badyaml: x\n---\nbody\n")
	writeSkill(t, project, "nodesc", "---\nname: nodesc\n---\nx\n")
	secret := writeSkill(t, outside, "secret", "---\ndescription: outside\n---\nsecret\n")
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(project, "escape")); err != nil {
		t.Fatal(err)
	}
	got, warnings := Load([]string{project, user, filepath.Join(project, "missing")})
	want := []Skill{{Name: "folder", Description: "named by its folder", Path: named}, {Name: "style", Description: "Go style rules.", Path: style}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	for _, w := range []string{broken + ": missing YAML front matter", badYAML + ":2: front matter: mapping values are not allowed", "nodesc/SKILL.md: description: required", "escape/SKILL.md: leads outside", "skill style is also defined in " + style} {
		if !strings.Contains(strings.Join(warnings, "\n"), w) {
			t.Errorf("warnings lack %q:\n%s", w, strings.Join(warnings, "\n"))
		}
	}
	body, err := Read(style)
	if err != nil || body != "Use gofmt." {
		t.Errorf("Read = %q, %v; want the body", body, err)
	}
}
