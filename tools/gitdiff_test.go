package tools

import (
	"github.com/odin-code/odin/tools/tool"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// gitT runs git for test setup, isolated from the machine's config.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// newRepoEnv returns an Env whose root is a git repository with one
// commit holding a.txt and b.txt.
func newRepoEnv(t *testing.T) *tool.Env {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	env := newRootEnv(t)
	gitT(t, env.Root, "init", "-q", "-b", "main")
	writeTestFile(t, env.Root, "a.txt", "alpha\n")
	writeTestFile(t, env.Root, "b.txt", "beta\n")
	writeTestFile(t, env.Root, ".gitignore", "*.log\n")
	gitT(t, env.Root, "add", ".")
	gitT(t, env.Root, "commit", "-qm", "init")
	return env
}

func TestGitDiff(t *testing.T) {
	type check struct {
		contains []string
		absent   []string
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		in    func(root string) GitDiffInput
		check check
	}{
		{
			name:  "unstaged changes",
			setup: func(t *testing.T, root string) { writeTestFile(t, root, "a.txt", "alpha\nmore\n") },
			in:    func(string) GitDiffInput { return GitDiffInput{} },
			check: check{contains: []string{"$ git diff --no-ext-diff --no-textconv --no-color -- ", "+++ b/a.txt", "+more"}},
		},
		{
			name:  "no changes",
			in:    func(string) GitDiffInput { return GitDiffInput{} },
			check: check{contains: []string{"No changes (working tree vs index; use base=HEAD to include staged changes)."}},
		},
		{
			name: "staged only",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "a.txt", "staged\n")
				gitT(t, root, "add", "a.txt")
				writeTestFile(t, root, "b.txt", "unstaged\n")
			},
			in:    func(string) GitDiffInput { return GitDiffInput{Staged: true} },
			check: check{contains: []string{"--cached", "+staged"}, absent: []string{"+unstaged"}},
		},
		{
			name: "base HEAD shows staged and unstaged",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "a.txt", "staged\n")
				gitT(t, root, "add", "a.txt")
				writeTestFile(t, root, "b.txt", "unstaged\n")
			},
			in:    func(string) GitDiffInput { return GitDiffInput{Base: "HEAD"} },
			check: check{contains: []string{"+staged", "+unstaged"}},
		},
		{
			name: "commit range",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "b.txt", "beta2\n")
				gitT(t, root, "commit", "-qam", "second")
			},
			in:    func(string) GitDiffInput { return GitDiffInput{Base: "HEAD~1..HEAD"} },
			check: check{contains: []string{"-beta", "+beta2"}},
		},
		{
			name: "stat only",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "a.txt", "changed\n")
			},
			in:    func(string) GitDiffInput { return GitDiffInput{StatOnly: true} },
			check: check{contains: []string{"a.txt | 2 +-", "1 file changed, 1 insertion(+), 1 deletion(-)"}, absent: []string{"+changed"}},
		},
		{
			name: "limited to a path",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "a.txt", "A\n")
				writeTestFile(t, root, "b.txt", "B\n")
			},
			in:    func(root string) GitDiffInput { return GitDiffInput{Path: filepath.Join(root, "b.txt")} },
			check: check{contains: []string{"+B"}, absent: []string{"+A"}},
		},
		{
			name:  "deleted file by path",
			setup: func(t *testing.T, root string) { os.Remove(filepath.Join(root, "b.txt")) },
			in:    func(root string) GitDiffInput { return GitDiffInput{Path: filepath.Join(root, "b.txt")} },
			check: check{contains: []string{"deleted file mode", "-beta"}},
		},
		{
			name: "path with glob characters is literal",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "a.txt", "A\n")
				writeTestFile(t, root, "[ab].txt", "new\n")
				gitT(t, root, "add", "[ab].txt")
			},
			in: func(root string) GitDiffInput {
				return GitDiffInput{Path: filepath.Join(root, "[ab].txt"), Staged: true}
			},
			check: check{contains: []string{"+new"}, absent: []string{"+A"}},
		},
		{
			name: "untracked files",
			setup: func(t *testing.T, root string) {
				writeTestFile(t, root, "new.txt", "one\ntwo\n")
				writeTestFile(t, root, "debug.log", "ignored\n")
			},
			in: func(string) GitDiffInput { return GitDiffInput{IncludeUntracked: true} },
			check: check{contains: []string{"No changes", "Untracked files (1):", "+++ b/new.txt", "+one\n+two"},
				absent: []string{"debug.log"}},
		},
		{
			name:  "untracked, stat only",
			setup: func(t *testing.T, root string) { writeTestFile(t, root, "new.txt", "one\ntwo\n") },
			in:    func(string) GitDiffInput { return GitDiffInput{IncludeUntracked: true, StatOnly: true} },
			check: check{contains: []string{"Untracked files (1):\n  new.txt (2 lines)"}},
		},
		{
			name:  "no untracked files",
			in:    func(string) GitDiffInput { return GitDiffInput{IncludeUntracked: true} },
			check: check{contains: []string{"Untracked files: none."}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newRepoEnv(t)
			if tt.setup != nil {
				tt.setup(t, env.Root)
			}
			res := runTool(t, NewGitDiff(), env, tt.in(env.Root))
			if res.IsError {
				t.Fatalf("error result: %s", res.Output)
			}
			for _, s := range tt.check.contains {
				if !strings.Contains(res.Output, s) {
					t.Errorf("output lacks %q:\n%s", s, res.Output)
				}
			}
			for _, s := range tt.check.absent {
				if strings.Contains(res.Output, s) {
					t.Errorf("output has %q:\n%s", s, res.Output)
				}
			}
		})
	}
}

func TestGitDiffErrors(t *testing.T) {
	env := newRepoEnv(t)
	// A path of this test's own: a /tmp/x made by anything else is no evidence.
	canary := filepath.Join(t.TempDir(), "x")
	plain := newRootEnv(t) // not a repository
	tests := []struct {
		name   string
		env    *tool.Env
		in     GitDiffInput
		want   string
		denied bool
	}{
		{"outside a repository", plain, GitDiffInput{}, "is not inside a git repository", false},
		{"option as base", env, GitDiffInput{Base: "--output=" + canary}, "is not a revision", false},
		{"unknown base", env, GitDiffInput{Base: "nosuchbranch"}, "failed: fatal:", false},
		{"staged with a range", env, GitDiffInput{Base: "a..b", Staged: true}, "cannot be combined", false},
		{"relative path", env, GitDiffInput{Path: "a.txt"}, "must be an absolute path", false},
		{"path outside the project", env, GitDiffInput{Path: t.TempDir()}, "permission denied", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runTool(t, NewGitDiff(), tt.env, tt.in)
			if !res.IsError || !strings.Contains(res.Output, tt.want) || res.Denied != tt.denied {
				t.Errorf("result = %+v; want an error with %q", res, tt.want)
			}
		})
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("an option passed as base was executed")
	}
}

func TestGitDiffRunsNothingFromTheRepository(t *testing.T) {
	env := newRepoEnv(t)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := writeTestFile(t, t.TempDir(), "evil.sh", "#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexit 1\n")
	os.Chmod(evil, 0o755)
	hooks := filepath.Join(env.Root, ".git", "hooks")
	for _, h := range []string{"pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman", "reference-transaction"} {
		writeTestFile(t, hooks, h, "#!/bin/sh\necho hook "+h+" >> "+marker+"\n")
		os.Chmod(filepath.Join(hooks, h), 0o755)
	}
	gitT(t, env.Root, "config", "core.fsmonitor", evil)
	gitT(t, env.Root, "config", "diff.external", evil)
	gitT(t, env.Root, "config", "diff.conv.textconv", evil)
	gitT(t, env.Root, "config", "filter.sneaky.clean", evil)
	gitT(t, env.Root, "config", "filter.sneaky.process", evil)
	gitT(t, env.Root, "config", "core.pager", evil)
	writeTestFile(t, env.Root, ".gitattributes", "a.txt diff=conv\nb.txt filter=sneaky\n")
	writeTestFile(t, env.Root, "a.txt", "alpha\nchanged\n")
	writeTestFile(t, env.Root, "b.txt", "beta\nchanged\n")
	writeTestFile(t, env.Root, "new.txt", "untracked\n")

	for _, in := range []GitDiffInput{{}, {Staged: true}, {Base: "HEAD"}, {StatOnly: true}, {IncludeUntracked: true}} {
		res := runTool(t, NewGitDiff(), env, in)
		if res.IsError {
			t.Fatalf("%+v: %s", in, res.Output)
		}
		if in == (GitDiffInput{}) && (!strings.Contains(res.Output, "+changed") || strings.Count(res.Output, "diff --git") != 2) {
			t.Errorf("diffs of a.txt and b.txt expected:\n%s", res.Output)
		}
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Fatalf("GitDiff ran repository-configured programs:\n%s", data)
	}

	// The same repository does run them under a plain git diff, so the
	// check above can fail.
	cmd := exec.Command("git", "diff")
	cmd.Dir = env.Root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Error("control: plain git diff did not run the planted programs; the test proves nothing")
	}
}

func TestGitDiffIgnoresInheritedGitVariables(t *testing.T) {
	env := newRepoEnv(t)
	writeTestFile(t, env.Root, "a.txt", "alpha\nmore\n")
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	t.Setenv("GIT_EXTERNAL_DIFF", "/bin/false")
	res := runTool(t, NewGitDiff(), env, GitDiffInput{})
	if res.IsError || !strings.Contains(res.Output, "+more") {
		t.Errorf("result = %+v", res)
	}
}

func TestGitDiffTruncates(t *testing.T) {
	env := newRepoEnv(t)
	writeTestFile(t, env.Root, "a.txt", strings.Repeat("a long changed line of text\n", 5000))
	res := runTool(t, NewGitDiff(), env, GitDiffInput{})
	if res.IsError || !strings.Contains(res.Output, "diff truncated:") || len(res.Output) > gitDiffMaxOutput+1000 {
		t.Errorf("result (%d bytes) not truncated: %.300s", len(res.Output), res.Output)
	}
}

// TestGitDiffUntrackedSpecialFiles: an untracked symlink to /dev/zero, a
// FIFO and a file past the size cap are listed, never read (reading
// /dev/zero would exhaust memory, a FIFO would block forever).
func TestGitDiffUntrackedSpecialFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	env := newRootEnv(t)
	root := env.Root
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(root, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(root, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	big.Truncate(gitUntrackedMaxBytes + 1)
	big.Close()
	for _, stat := range []bool{true, false} {
		res := runTool(t, NewGitDiff(), env, map[string]any{"include_untracked": true, "stat_only": stat})
		if res.IsError {
			t.Fatalf("stat_only=%v: %s", stat, res.Output)
		}
		zero := "+/dev/zero" // the link's text, never the device's content
		if stat {
			zero = "zero (symlink to /dev/zero)"
		}
		for _, want := range []string{zero, "big.bin (8.0 MiB; too large to show"} {
			if !strings.Contains(res.Output, want) {
				t.Errorf("stat_only=%v: output lacks %q:\n%s", stat, want, res.Output)
			}
		}
	}
}
