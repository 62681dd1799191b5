package instructions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempDir is t.TempDir with its symlinks resolved, as a project root is.
func tempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func contents(srcs []Source) []string {
	var got []string
	for _, s := range srcs {
		got = append(got, s.Content)
	}
	return got
}

func TestLoadOrderEveryFileAndDuplicates(t *testing.T) {
	base := tempDir(t)
	repo := filepath.Join(base, "repo")
	sub := filepath.Join(repo, "svc", "api")
	user := filepath.Join(base, "user")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(base, "ODIN.md"), "outside the repo: never read")
	write(t, filepath.Join(user, "ODIN.md"), "user rules")
	write(t, filepath.Join(repo, "CLAUDE.md"), "repo claude")
	write(t, filepath.Join(repo, "svc", "AGENTS.md"), "svc agents")
	write(t, filepath.Join(repo, "svc", "CLAUDE.md"), "svc claude")
	write(t, filepath.Join(sub, "ODIN.md"), "api odin")
	write(t, filepath.Join(sub, "AGENTS.md"), "api odin") // same text: read once
	if err := os.Symlink("ODIN.md", filepath.Join(sub, "CLAUDE.md")); err != nil {
		t.Fatal(err) // same file: read once
	}

	res, err := Load(Options{Root: sub, UserDir: user})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user rules", "repo claude", "svc agents", "svc claude", "api odin"}
	if diff := cmp.Diff(want, contents(res.Sources)); diff != "" {
		t.Fatal(diff)
	}
	if len(res.Skipped) != 0 {
		t.Errorf("skipped %v", res.Skipped)
	}
	if got := contents(Project(res.Sources)); got[0] != "repo claude" || len(got) != 4 {
		t.Errorf("Project = %v", got)
	}
	joined := Join(res.Sources)
	if !strings.Contains(joined, "from "+filepath.Join(sub, "ODIN.md")) || strings.Index(joined, "user rules") > strings.Index(joined, "api odin") {
		t.Errorf("Join: %s", joined)
	}
}

func TestLoadOutsideGit(t *testing.T) {
	dir := tempDir(t)
	res, err := Load(Options{Root: dir})
	if err != nil || len(res.Sources) != 0 {
		t.Fatalf("Load = %v, %v; want nothing", res, err)
	}
	write(t, filepath.Join(dir, "AGENTS.md"), strings.Repeat("x", MaxBytes+10))
	res, _ = Load(Options{Root: dir})
	if len(res.Sources) != 1 || !strings.HasSuffix(res.Sources[0].Content, "[… truncated]") {
		t.Fatalf("oversized file not truncated")
	}
}

// Attack: a clone's AGENTS.md is a symlink to a secret of the user's (or
// a link inside passes through a symlinked directory); ReadFile refuses
// that path, so the instructions must too.
func TestSymlinkOutsideTheProjectIsNotRead(t *testing.T) {
	base := tempDir(t)
	secret := filepath.Join(base, "secret.txt")
	write(t, secret, "CANARY-SECRET")
	proj := filepath.Join(base, "proj")
	write(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	if err := os.Symlink(secret, filepath.Join(proj, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(proj, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("up/secret.txt", filepath.Join(proj, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(proj, "ODIN.md"), "fine")
	res, err := Load(Options{Root: proj})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(Join(res.Sources), "CANARY") {
		t.Fatalf("a file outside the project was read: %q", Join(res.Sources))
	}
	if len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].String(), "outside the project") {
		t.Errorf("the user is not told: %v", res.Skipped)
	}
}

// Attack: an empty .git file (or one pointing nowhere) in a parent
// directory would make that directory the repository root and its ODIN.md
// part of the prompt.
func TestPlantedGitFileInAParentIsNotARepository(t *testing.T) {
	for name, dotGit := range map[string]string{"empty": "", "dangling": "gitdir: /nonexistent/x\n"} {
		t.Run(name, func(t *testing.T) {
			base := tempDir(t)
			write(t, filepath.Join(base, ".git"), dotGit)
			write(t, filepath.Join(base, "ODIN.md"), "CANARY-PARENT")
			proj := filepath.Join(base, "proj")
			write(t, filepath.Join(proj, "ODIN.md"), "project")
			res, err := Load(Options{Root: proj})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"project"}, contents(res.Sources)); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestHomeStopsTheSearch(t *testing.T) {
	home := tempDir(t)
	write(t, filepath.Join(home, ".git", "HEAD"), "ref: refs/heads/main\n") // a dotfiles repository
	write(t, filepath.Join(home, "ODIN.md"), "CANARY-HOME")
	proj := filepath.Join(home, "src", "proj")
	write(t, filepath.Join(proj, "ODIN.md"), "project")
	res, err := Load(Options{Root: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"project"}, contents(res.Sources)); diff != "" {
		t.Error(diff)
	}
}

func TestWorktreeGitFileCounts(t *testing.T) {
	base := tempDir(t)
	write(t, filepath.Join(base, "main", ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/wt\n")
	wt := filepath.Join(base, "wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(base, "main", ".git", "worktrees", "wt")+"\n")
	write(t, filepath.Join(wt, "ODIN.md"), "top")
	sub := filepath.Join(wt, "pkg")
	write(t, filepath.Join(sub, "AGENTS.md"), "pkg")
	res, err := Load(Options{Root: sub})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"top", "pkg"}, contents(res.Sources)); diff != "" {
		t.Error(diff)
	}
}

func TestFifoIsNotRead(t *testing.T) {
	dir := tempDir(t)
	if err := mkfifo(filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Skip(err)
	}
	res, err := Load(Options{Root: dir})
	if err != nil || len(res.Sources) != 0 || len(res.Skipped) != 1 {
		t.Fatalf("Load = %+v, %v", res, err)
	}
}

func TestImports(t *testing.T) {
	base := tempDir(t)
	proj := filepath.Join(base, "proj")
	write(t, filepath.Join(base, "secret.txt"), "CANARY-SECRET")
	write(t, filepath.Join(proj, "CLAUDE.md"), "See @docs/style.md and @README.md.\nAsk @someone. Mail a@b.com.\n"+
		"`@docs/code.md` is code.\n```\n@docs/code.md\n```\nAlso @../secret.txt and @"+filepath.Join(base, "secret.txt")+"\n")
	write(t, filepath.Join(proj, "docs", "style.md"), "Tabs. See @deep.md")
	write(t, filepath.Join(proj, "docs", "deep.md"), "Deep. Back to @style.md")
	write(t, filepath.Join(proj, "docs", "code.md"), "CANARY-CODE")
	write(t, filepath.Join(proj, "README.md"), "Readme.")
	res, err := Load(Options{Root: proj})
	if err != nil {
		t.Fatal(err)
	}
	got := contents(res.Sources)
	if len(got) != 4 || got[1] != "Tabs. See @deep.md" || got[2] != "Deep. Back to @style.md" || got[3] != "Readme." {
		t.Fatalf("sources = %q", got)
	}
	joined := Join(res.Sources)
	if strings.Contains(joined, "CANARY") {
		t.Errorf("read what it must not: %s", joined)
	}
	if !strings.Contains(joined, "(imported by "+filepath.Join(proj, "CLAUDE.md")+")") {
		t.Errorf("Join does not say who imported: %s", joined)
	}
	if len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, "outside the project") {
		t.Errorf("skipped = %v", res.Skipped)
	}
}

func TestImportDepth(t *testing.T) {
	proj := tempDir(t)
	write(t, filepath.Join(proj, "ODIN.md"), "@f0.md")
	for i := range 8 {
		write(t, filepath.Join(proj, "f"+string(rune('0'+i))+".md"), "level "+string(rune('0'+i))+" @f"+string(rune('1'+i))+".md")
	}
	res, err := Load(Options{Root: proj})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 1+MaxImportDepth || len(res.Skipped) != 1 {
		t.Errorf("sources %d, skipped %v", len(res.Sources), res.Skipped)
	}
}
