package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/readdeny"
)

// landlockSecrets is a git project under the fake home holding the
// secrets the read deny list names inside a project — .env and .env.local
// at its root, a key and a certificate deeper — each with its own canary,
// beside ordinary files.
type landlockSecrets struct {
	home, root string
	canaries   map[string]string // path relative to root → canary
	rules      *readdeny.Rules
}

func newLandlockSecrets(t *testing.T) landlockSecrets {
	t.Helper()
	if !Probe().Available {
		t.Skip("Landlock unavailable: " + Probe().Reason)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	h := newDenyHome(t) // outside /tmp, with its own .env files
	s := landlockSecrets{home: h.home, root: filepath.Join(h.home, "work", "app"), canaries: map[string]string{}}
	if err := os.MkdirAll(filepath.Join(s.root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(s.root, "main.go"), "package main\n")
	write(t, filepath.Join(s.root, "src", "lib.go"), "package src\n")
	write(t, filepath.Join(s.root, ".gitignore"), ".env*\n*.pem\nid_rsa\n")
	gitEnv := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = s.root, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for i, rel := range []string{".env", ".env.local", "certs/server.pem", "deploy/keys/id_rsa"} {
		c := fmt.Sprintf("LLSECRET-%d-%d-canary", i, os.Getpid())
		p := filepath.Join(s.root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, c+"\n")
		s.canaries[rel] = c
	}
	write(t, filepath.Join(s.root, "certs", "README"), "CERTS-README-VISIBLE\n")
	write(t, filepath.Join(s.root, ".env.example"), "TEMPLATE-VISIBLE\n")
	s.rules, err = readdeny.New(readdeny.Options{Home: s.home, Root: s.root, User: []string{"*.pem", "id_rsa"}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s landlockSecrets) launcher(rules *readdeny.Rules) *Launcher {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.home, "LANG=C.UTF-8", "GIT_CONFIG_GLOBAL=/dev/null"}
	return New(Options{Mode: ModeLandlock, Root: s.root, DenyRead: rules, Environ: func() []string { return env }})
}

// landlockSteal is every way a command that escaped the shell policy
// would try to read the project's secrets under Landlock: directly,
// through a hard link, a symbolic link, a copy or a rename into a
// readable directory, /proc's view of the root, an interpreter, mmap
// (tail), a descriptor, the whole tree at once, and git's own reading of
// the work tree.
const landlockSteal = `for f in .env .env.local certs/server.pem deploy/keys/id_rsa; do
  b=$(basename "$f")
  cat "$f" 2>&1
  ln "$f" "src/hl-$b" 2>&1; cat "src/hl-$b" 2>&1
  ln -s "$PWD/$f" "src/sl-$b" 2>&1; cat "src/sl-$b" 2>&1
  cp "$f" "src/cp-$b" 2>&1; cat "src/cp-$b" 2>&1
  mv "$f" "src/mv-$b" 2>&1; cat "src/mv-$b" 2>&1
  cat "/proc/self/root$PWD/$f" 2>&1
  python3 -c 'import sys; print(open(sys.argv[1]).read())' "$f" 2>&1
  tail -c +1 "$f" 2>&1
  ( exec 3<"$f" && cat <&3 ) 2>&1
  echo replaced > "$f" 2>&1; rm -f "$f" 2>&1
done
grep -ra LLSECRET . 2>&1
find . -type f -exec cat {} + 2>&1
tar cf - . 2>/dev/null | strings
git add -f .env certs/server.pem 2>&1; git diff --cached 2>&1; git hash-object .env 2>&1
true`

// TestAttackLandlockProjectSecrets: under the Landlock fallback no byte of
// the project's denied files (.env, .env.*, a key, a certificate; at the
// root and deeper) reaches a command's output, however it reads them, in
// edit and in ask mode, and none of them is changed, moved or removed.
// The control runs the same attack without the deny list and reads them.
func TestAttackLandlockProjectSecrets(t *testing.T) {
	s := newLandlockSecrets(t)
	for _, write := range []bool{true, false} {
		out, err := run(t, s.launcher(s.rules), write, landlockSteal)
		if err != nil {
			t.Fatalf("write=%v: %v\n%s", write, err, out)
		}
		for rel, c := range s.canaries {
			if strings.Contains(out, c) {
				t.Errorf("write=%v: the canary of %s reached the command under Landlock:\n%s", write, rel, out)
			}
			if data, err := os.ReadFile(filepath.Join(s.root, rel)); err != nil || string(data) != c+"\n" {
				t.Errorf("write=%v: %s changed by the command (%v): %q", write, rel, err, data)
			}
		}
		for _, want := range []string{"TEMPLATE-VISIBLE", "CERTS-README-VISIBLE", "package main", "package src"} {
			if !strings.Contains(out, want) {
				t.Errorf("write=%v: the attack could not read %q, which stays readable (the test proves less than it says):\n%s", write, want, out)
			}
		}
	}
	// Control: the same attack without the deny list reads every secret.
	out, _ := run(t, s.launcher(nil), false, landlockSteal)
	for rel, c := range s.canaries {
		if !strings.Contains(out, c) {
			t.Errorf("control: without a deny list the attack did not read %s; it proves nothing:\n%s", rel, out)
		}
	}
}

// TestLandlockProjectSecretsOrdinaryWork: with denied files in the
// project, the ordinary work of a command still goes under Landlock:
// reading and changing every file that is not denied, at the root too,
// making, reading back and running new files in the project's
// directories, and git's read-only commands.
func TestLandlockProjectSecretsOrdinaryWork(t *testing.T) {
	s := newLandlockSecrets(t)
	script := `set -e
cat main.go src/lib.go certs/README .env.example
echo '// changed' >> main.go
echo 'package src // new' > src/new.go && cat src/new.go
mkdir -p src/sub/deeper && echo deep > src/sub/deeper/f.txt && cat src/sub/deeper/f.txt
echo 'readme changed' >> certs/README && cat certs/README
cp "$(type -P true)" src/tool && ./src/tool && echo ran-new-binary
printf '#!/bin/sh\necho ran-new-script\n' > src/run.sh && chmod +x src/run.sh && ./src/run.sh
rm src/new.go && mv src/sub src/moved && cat src/moved/deeper/f.txt
git status --porcelain
git log --oneline | wc -l
git diff --stat
ls -a`
	out, err := run(t, s.launcher(s.rules), true, script)
	if err != nil {
		t.Fatalf("ordinary work failed under Landlock with denied files in the project: %v\n%s", err, out)
	}
	for _, want := range []string{"package main", "package src // new", "deep", "readme changed", "ran-new-binary", "ran-new-script",
		"M main.go", "main.go | 1 +", ".env.local", "TEMPLATE-VISIBLE"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(s.root, "main.go")); !strings.Contains(string(b), "// changed") {
		t.Errorf("main.go at the root was not changed: %q", b)
	}
	// The price (landlockReadGrants): nothing new directly beside a
	// denied file; the command fails at once rather than leaving a file
	// it cannot read back.
	out, _ = run(t, s.launcher(s.rules), true, `echo x > new-at-root.txt 2>&1; echo x > certs/new.txt 2>&1; true`)
	for _, rel := range []string{"new-at-root.txt", "certs/new.txt"} {
		if _, err := os.Stat(filepath.Join(s.root, rel)); err == nil {
			t.Errorf("%s was made beside a denied file, where it could not be read back:\n%s", rel, out)
		}
	}
	// Without denied files at the root the root takes new files as
	// before (a project with no .git, .odin nor odin.yaml).
	bare := filepath.Join(s.home, "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(bare, "a.txt"), "A\n")
	rules, err := readdeny.New(readdeny.Options{Home: s.home, Root: bare})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.home}
	l := New(Options{Mode: ModeLandlock, Root: bare, DenyRead: rules, Environ: func() []string { return env }})
	if out, err := run(t, l, true, "echo made > b.txt && cat b.txt a.txt"); err != nil || !strings.Contains(out, "made") {
		t.Errorf("a project without denied files lost new files at its root (%v):\n%s", err, out)
	}
}

// TestAttackLandlockRootSymlink: a repository may commit symbolic links,
// and under Landlock the root's entries get rules of their own (the root
// holds .git, or a denied file): a link among them must not carry the
// project's rights to what it leads to — writing ~/.bashrc-like files
// outside the project, reading a denied key.
func TestAttackLandlockRootSymlink(t *testing.T) {
	s := newLandlockSecrets(t)
	outside := filepath.Join(s.home, "outside.txt")
	write(t, outside, "original\n")
	key := filepath.Join(s.home, ".ssh", "id_rsa") // newDenyHome's, denied
	keyData, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"rc-link": outside, "key-link": key} {
		if err := os.Symlink(target, filepath.Join(s.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rules := range []*readdeny.Rules{s.rules, nil} {
		out, _ := run(t, s.launcher(rules), true, `echo pwned >> rc-link; cat key-link; cat rc-link; true`)
		if b, _ := os.ReadFile(outside); string(b) != "original\n" {
			t.Errorf("deny list %v: a link at the project's root let the command write outside it: %q\n%s", rules != nil, b, out)
		}
		if !strings.Contains(out, "original") {
			t.Errorf("deny list %v: the file outside, readable on its own, could not be read through the link (the test proves less than it says):\n%s", rules != nil, out)
		}
		if rules != nil && strings.Contains(out, strings.TrimSpace(string(keyData))) {
			t.Errorf("a link at the project's root let the command read the denied key:\n%s", out)
		}
	}
}
