package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/readdeny"
)

// denyHome is a fake home (outside /tmp, which bubblewrap replaces, so that
// a command would see it) holding an SSH key, AWS credentials and a project
// with a .env, each with its own canary.
type denyHome struct {
	home, root string
	canaries   map[string]string // file → canary
}

func newDenyHome(t *testing.T) denyHome {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "odin-deny-home-")
	if err != nil {
		t.Skipf("no directory outside /tmp to put a fake home in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	base, _ = filepath.EvalSymlinks(base)
	h := denyHome{home: base, root: filepath.Join(base, "src", "proj"), canaries: map[string]string{}}
	for i, rel := range []string{".ssh/id_rsa", ".aws/credentials", "src/proj/.env", "src/proj/svc/.env.production"} {
		c := fmt.Sprintf("CANARY-%d-%d-denyread", i, os.Getpid())
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, c+"\n")
		h.canaries[rel] = c
	}
	write(t, filepath.Join(h.root, ".env.example"), "TEMPLATE-VISIBLE\n")
	write(t, filepath.Join(h.root, "main.go"), "package main\n")
	// A link in the project to the key: the command follows it to the
	// hidden file.
	if err := os.Symlink(filepath.Join(base, ".ssh", "id_rsa"), filepath.Join(h.root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h denyHome) launcher(t *testing.T, user ...string) *Launcher {
	t.Helper()
	rules, err := readdeny.New(readdeny.Options{Home: h.home, Root: h.root, User: user})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home, "LANG=C.UTF-8"}
	return New(Options{Mode: ModeBubblewrap, Root: h.root, DenyRead: rules, Environ: func() []string { return env }})
}

// exfiltrate is what a command that escaped the shell policy would try.
const exfiltrate = `cat ~/.ssh/id_rsa ~/.aws/credentials .env svc/.env.production notes.txt .env.example 2>&1
grep -r CANARY ~ 2>/dev/null
find ~ -type f -exec cat {} + 2>/dev/null
tar cf - ~/.ssh ~/.aws . 2>/dev/null | strings
true`

// TestDenyReadHidesSecretsFromCommands: under bubblewrap, no byte of a
// denied file reaches a command's output, however it reads it, in edit mode
// (project writable) and ask mode.
func TestDenyReadHidesSecretsFromCommands(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap unusable here: " + why)
	}
	h := newDenyHome(t)
	for _, write := range []bool{true, false} {
		out, err := run(t, h.launcher(t), write, exfiltrate)
		if err != nil {
			t.Fatalf("write=%v: %v\n%s", write, err, out)
		}
		for file, c := range h.canaries {
			if strings.Contains(out, c) {
				t.Errorf("write=%v: the canary of %s reached the command's output:\n%s", write, file, out)
			}
		}
		if !strings.Contains(out, "TEMPLATE-VISIBLE") {
			t.Errorf("write=%v: .env.example should stay readable:\n%s", write, out)
		}
	}
	// A denied file is not writable either (a command must not replace
	// the user's key), and the write leaves the original intact.
	out, _ := run(t, h.launcher(t), true, "echo replaced > .env; echo replaced > ~/.ssh/id_rsa; true")
	for _, rel := range []string{"src/proj/.env", ".ssh/id_rsa"} {
		data, err := os.ReadFile(filepath.Join(h.home, rel))
		if err != nil || !strings.Contains(string(data), h.canaries[rel]) {
			t.Errorf("%s changed by a sandboxed command (%v): %q; output %s", rel, err, data, out)
		}
	}
}

// TestDenyReadControl: without the list, the same commands do read the
// canaries (the test above can fail), and the user's "!.env" makes the
// project's .env readable again while the key stays hidden.
func TestDenyReadControl(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap unusable here: " + why)
	}
	h := newDenyHome(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home}
	bare := New(Options{Mode: ModeBubblewrap, Root: h.root, Environ: func() []string { return env }})
	out, err := run(t, bare, false, exfiltrate)
	if err != nil {
		t.Fatal(err)
	}
	for file, c := range h.canaries {
		if !strings.Contains(out, c) {
			t.Errorf("without a deny list the command could not read %s; the attack test proves nothing:\n%s", file, out)
		}
	}
	out, err = run(t, h.launcher(t, "!.env"), false, exfiltrate)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, h.canaries["src/proj/.env"]) {
		t.Errorf("!.env did not make .env readable:\n%s", out)
	}
	for _, rel := range []string{".ssh/id_rsa", "src/proj/svc/.env.production"} {
		if strings.Contains(out, h.canaries[rel]) {
			t.Errorf("!.env exposed %s:\n%s", rel, out)
		}
	}
}

// TestDenyReadNewFile: a .env created after the first command (the cached
// project walk must notice) is hidden from the next one.
func TestDenyReadNewFile(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap unusable here: " + why)
	}
	h := newDenyHome(t)
	l := h.launcher(t)
	if _, err := run(t, l, false, "true"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.root, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(h.root, "deploy", ".env.staging"), "CANARY-new-denyread\n")
	out, err := run(t, l, false, "cat deploy/.env.staging; grep -r CANARY . ; true")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "CANARY-new-denyread") {
		t.Errorf("a .env created between commands was readable:\n%s", out)
	}
}

// BenchmarkLaunchDenyRead measures what hiding the deny list adds to a
// bubblewrap launch in a project of 2000 directories and 20000 files,
// against the same launch without a list.
func BenchmarkLaunchDenyRead(b *testing.B) {
	if _, why := probeBwrap("bwrap"); why != "" {
		b.Skip("bubblewrap unusable here: " + why)
	}
	// A home with credentials and 100 other entries, the project in it.
	home := b.TempDir()
	for _, d := range []string{".ssh", ".aws", ".kube", ".config/gh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(home, fmt.Sprintf(".rc%d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	root := filepath.Join(home, "proj")
	for d := range 2000 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%d", d/50), fmt.Sprintf("sub%d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if d%400 == 0 {
			if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("X=1"), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Directories changed in the last seconds are listed again on every
	// call (their mtime may not move on the next change); a project is
	// older than that between commands.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chtimes(p, old, old)
		}
		return nil
	})
	opts := readdeny.Options{Home: home, Root: root}
	rules, err := readdeny.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		mode  Mode
		rules *readdeny.Rules
	}{{"bubblewrap-none", ModeBubblewrap, nil}, {"bubblewrap-deny", ModeBubblewrap, rules},
		{"landlock-none", ModeLandlock, nil}, {"landlock-deny", ModeLandlock, rules}} {
		l := New(Options{Mode: tc.mode, Root: root, DenyRead: tc.rules})
		if l.Status().Refuse {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {

			for b.Loop() {
				p, err := l.Command(b.Context(), Spec{Args: []string{"bash", "-c", "true"}, Write: true})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Run(); err != nil {
					b.Fatal(err)
				}
				p.Release()
			}
			if tc.mode == ModeLandlock && tc.rules != nil {
				b.ReportMetric(float64(len(l.landlockReadGrants())), "read-rules")
			}
		})
	}
	// Finding the paths alone: with the cache warm, and the first call of
	// a session (every directory listed).
	b.Run("find-warm", func(b *testing.B) {
		for b.Loop() {
			if f := rules.Existing(); len(f.Paths) == 0 {
				b.Fatal("nothing found")
			}
		}
	})
	b.Run("find-cold", func(b *testing.B) {
		for b.Loop() {
			r, _ := readdeny.New(opts)
			if f := r.Existing(); len(f.Paths) == 0 {
				b.Fatal("nothing found")
			}
		}
	})
}

// TestDenyReadAroundWritable: a denied directory that holds the project
// cannot be hidden whole (the project would vanish), but what is denied
// inside it on its own still is, and commands still run.
func TestDenyReadAroundWritable(t *testing.T) {
	if _, why := probeBwrap("bwrap"); why != "" {
		t.Skip("bubblewrap unusable here: " + why)
	}
	h := newDenyHome(t)
	l := h.launcher(t, "~/src/")
	out, err := run(t, l, true, "cat main.go; cat ~/.ssh/id_rsa .env 2>&1; true")
	if err != nil || !strings.Contains(out, "package main") {
		t.Fatalf("the project is not usable (%v):\n%s", err, out)
	}
	for _, rel := range []string{".ssh/id_rsa", "src/proj/.env"} {
		if strings.Contains(out, h.canaries[rel]) {
			t.Errorf("%s readable:\n%s", rel, out)
		}
	}
}

// TestDenyReadLandlock: the Landlock fallback hides the denied files,
// outside the project (the key, the credentials) and in it (.env), from
// every way of reading them, while the rest of the home stays readable and
// listable and the project's directories take new files
// (TestAttackLandlockProjectSecrets plays the attacks in the project).
func TestDenyReadLandlock(t *testing.T) {
	if !Probe().Available {
		t.Skip("Landlock unavailable: " + Probe().Reason)
	}
	h := newDenyHome(t)
	write(t, filepath.Join(h.home, "notes.md"), "HOME-VISIBLE\n")
	rules, err := readdeny.New(readdeny.Options{Home: h.home, Root: h.root})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h.root, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.home, "LANG=C.UTF-8"}
	l := New(Options{Mode: ModeLandlock, Root: h.root, DenyRead: rules, Environ: func() []string { return env }})
	out, err := run(t, l, true, exfiltrate+"\ncat ~/notes.md; ls ~/.ssh; echo built > pkg/out.txt; cat pkg/out.txt")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for rel := range h.canaries {
		if strings.Contains(out, h.canaries[rel]) {
			t.Errorf("the canary of %s reached the command under Landlock:\n%s", rel, out)
		}
	}
	for _, want := range []string{"HOME-VISIBLE", "id_rsa", "built", "TEMPLATE-VISIBLE"} {
		if !strings.Contains(out, want) {
			t.Errorf("under Landlock the command lost %q:\n%s", want, out)
		}
	}
	// Control: without the list the same command reads the key.
	bare := New(Options{Mode: ModeLandlock, Root: h.root, Environ: func() []string { return env }})
	if out, _ := run(t, bare, false, exfiltrate); !strings.Contains(out, h.canaries[".ssh/id_rsa"]) {
		t.Errorf("control: the key is not readable without a deny list:\n%s", out)
	}
}
