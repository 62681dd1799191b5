package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPlantedGitDirRemoved: a write-mode command in a directory with no
// .git plants one whose config makes git run a program (core.fsmonitor
// runs on every `git status`, as shell prompts do); when the command ends
// it is gone, and the user's own git, outside the sandbox, runs nothing.
// A plain `git init` stays.
func TestPlantedGitDirRemoved(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, mode := range append(kinds(t), ModeOff) {
		t.Run(string(mode), func(t *testing.T) {
			p := newProject(t)
			if err := os.RemoveAll(filepath.Join(p.root, ".git")); err != nil {
				t.Fatal(err)
			}
			canary := filepath.Join(p.outside, "fsmonitor-ran")
			l := p.launcher(mode, baseEnv())
			attacks := map[string]string{
				"fsmonitor": `mkdir -p .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD && printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ` + canary + `; false"\n' > .git/config`,
				"hook":      `git init -q . && printf '#!/bin/sh\ntouch ` + canary + `\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
				"gitdir":    `mkdir -p evil && git init -q evil && git -C evil config core.fsmonitor "touch ` + canary + `; false" && mv evil/.git repo.git && echo "gitdir: repo.git" > .git`,
			}
			for name, script := range attacks {
				out, err := run(t, l, true, script)
				// Landlock grants writes beneath the root's entries, not
				// new entries at its top: the plant fails at once there.
				if err != nil && mode != ModeLandlock {
					t.Fatalf("%s: the command failed: %v\n%s", name, err, out)
				}
				if _, err := os.Lstat(filepath.Join(p.root, ".git")); !os.IsNotExist(err) {
					t.Errorf("%s: the planted .git is still there (%v)", name, err)
				}
				// The user's git, unsandboxed, in the project.
				user := exec.Command(git, "status")
				user.Dir = p.root
				_ = user.Run()
				commit := exec.Command(git, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "x")
				commit.Dir = p.root
				_ = commit.Run()
				if _, err := os.Stat(canary); err == nil {
					t.Fatalf("%s: the user's git ran the planted program", name)
				}
				_ = os.RemoveAll(filepath.Join(p.root, ".git"))
				_ = os.RemoveAll(filepath.Join(p.root, "repo.git"))
			}

			if mode == ModeLandlock {
				return // no new top-level entry at all, git init included
			}
			// git init is fine.
			if out, err := run(t, l, true, "git init -q . && git config core.autocrlf false || true"); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			// core.autocrlf is no program, but not what git init writes:
			// the rule is the allow list, so it goes too.
			if _, err := os.Lstat(filepath.Join(p.root, ".git")); !os.IsNotExist(err) {
				t.Errorf("a .git with a config key git init does not write was kept")
			}
			if out, err := run(t, l, true, "git init -q ."); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			if fi, err := os.Stat(filepath.Join(p.root, ".git", "HEAD")); err != nil || fi.Size() == 0 {
				t.Errorf("a plain git init was removed: %v", err)
			}
		})
	}
}

func TestUnsafeConfig(t *testing.T) {
	dir := t.TempDir()
	clone := "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n"
	for _, c := range []struct {
		cfg         string
		cloned, bad bool
	}{
		{"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", false, false},
		{"# comment\n[core]\n\tbare = false\n", false, false},
		{"[core]\n\tfsmonitor = evil\n", false, true},
		{"[core]\n\thooksPath = /tmp\n", false, true},
		{"[core]\n\tbare = false\n[filter \"x\"]\n\tclean = evil\n", false, true},
		{"[include]\n\tpath = /tmp/x\n", false, true},
		{"[core]\n\tbare = false\n[alias]\n\tst = !evil\n", false, true},
		{"[core] fsmonitor = evil\n", true, true},
		{"[core \"x\"]\n\tbare = false\n", true, true},
		{clone, false, true},
		{clone, true, false},
		{clone + "[remote \"x\"]\n\turl = ext::sh -c evil\n", true, true},
		{clone + "[remote \"x\"]\n\tuploadpack = evil\n", true, true},
		{clone + "[branch \"main\"]\n\tremote = origin\n\tfsmonitor = evil\n", true, true},
		{"[remote]\n\turl = https://x\n", true, true},
	} {
		p := filepath.Join(dir, "config")
		if err := os.WriteFile(p, []byte(c.cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := unsafeConfig(p, c.cloned) != ""; got != c.bad {
			t.Errorf("unsafeConfig(%q, cloned %v) = %v, want %v", c.cfg, c.cloned, got, c.bad)
		}
	}
}

// BenchmarkRepoWalk measures the walk for planted repositories that a
// write-mode command costs twice (before and after), on a tree of 2,000
// directories: cached (the usual case: nothing changed) and cold (the
// session's first command).
func BenchmarkRepoWalk(b *testing.B) {
	root := b.TempDir()
	for i := range 2000 {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("e%03d", i%100))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f.go"), []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Old enough that no directory counts as just changed.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	b.Run("cached", func(b *testing.B) {
		var tree gitTree
		tree.scan([]string{root})
		for b.Loop() {
			tree.scan([]string{root})
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			var tree gitTree
			tree.scan([]string{root})
		}
	})
}
