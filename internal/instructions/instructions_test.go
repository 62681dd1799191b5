package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOrderAndFallbacks(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	sub := filepath.Join(repo, "svc", "api")
	user := filepath.Join(base, "user")
	for _, d := range []string{filepath.Join(repo, ".git"), sub, user} {
		os.MkdirAll(d, 0o755)
	}
	write := func(p, s string) { os.WriteFile(p, []byte(s), 0o644) }
	write(filepath.Join(base, "ODIN.md"), "outside the repo: never read")
	write(filepath.Join(user, "ODIN.md"), "user rules")
	write(filepath.Join(repo, "CLAUDE.md"), "repo claude")
	write(filepath.Join(repo, "svc", "AGENTS.md"), "svc agents")
	write(filepath.Join(repo, "svc", "CLAUDE.md"), "svc claude: shadowed by AGENTS.md")
	write(filepath.Join(sub, "ODIN.md"), "api odin")
	write(filepath.Join(sub, "CLAUDE.md"), "api claude: shadowed by ODIN.md")

	srcs, err := Load(sub, user)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, s.Content)
	}
	want := []string{"user rules", "repo claude", "svc agents", "api odin"}
	if !cmp.Equal(got, want) {
		t.Fatal(cmp.Diff(want, got))
	}
	joined := Join(srcs)
	if !strings.Contains(joined, "from "+filepath.Join(sub, "ODIN.md")) || strings.Index(joined, "user rules") > strings.Index(joined, "api odin") {
		t.Errorf("Join: %s", joined)
	}
}

func TestLoadOutsideGit(t *testing.T) {
	dir := t.TempDir()
	srcs, err := Load(dir, "")
	if err != nil || len(srcs) != 0 {
		t.Fatalf("Load = %v, %v; want nothing", srcs, err)
	}
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(strings.Repeat("x", MaxBytes+10)), 0o644)
	srcs, _ = Load(dir, "")
	if len(srcs) != 1 || !strings.HasSuffix(srcs[0].Content, "[… truncated]") {
		t.Fatalf("oversized file not truncated")
	}
}
