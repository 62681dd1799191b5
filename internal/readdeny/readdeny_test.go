package readdeny

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixture is a fake home and a project inside it, with secrets in the
// usual places.
type fixture struct {
	home, root string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{home: filepath.Join(base, "home"), root: filepath.Join(base, "home", "src", "proj")}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.home, ".ssh", "id_rsa"), "KEY")
	write(filepath.Join(f.home, ".aws", "credentials"), "AWS")
	write(filepath.Join(f.home, ".cargo", "credentials.toml"), "CARGO")
	write(filepath.Join(f.home, ".cargo", "config.toml"), "cfg")
	write(filepath.Join(f.home, ".gitconfig"), "[user]")
	write(filepath.Join(f.root, ".env"), "SECRET=1")
	write(filepath.Join(f.root, ".env.example"), "SECRET=")
	write(filepath.Join(f.root, "svc", ".env.local"), "SECRET=2")
	write(filepath.Join(f.root, "main.go"), "package main")
	write(filepath.Join(f.root, "keys", "prod.pem"), "PEM")
	if err := os.Symlink(filepath.Join(f.home, ".ssh", "id_rsa"), filepath.Join(f.root, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	return f
}

func mustNew(t *testing.T, opts Options) *Rules {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMatch(t *testing.T) {
	f := newFixture(t)
	r := mustNew(t, Options{Home: f.home, Root: f.root, Private: []string{filepath.Join(f.home, ".local/state/odin/serve/token")},
		User: []string{"keys/"}, Project: []string{"*.pem", "!.env"}})
	for _, tc := range []struct {
		path string
		rule string // "" when allowed
	}{
		{f.home + "/.ssh/id_rsa", "~/.ssh (default)"},
		{f.home + "/.ssh", "~/.ssh (default)"},
		{f.home + "/.ssh/../.ssh/id_rsa", "~/.ssh (default)"},
		{f.home + "/.aws/credentials", "~/.aws (default)"},
		{f.home + "/.cargo/credentials.toml", "~/.cargo/credentials* (default)"},
		{f.home + "/.cargo/config.toml", ""},
		{f.home + "/.gitconfig", ""},
		{f.home + "/.local/state/odin/serve/token", "default"},
		{f.root + "/.env", ".env (default)"},
		{f.root + "/svc/.env.local", ".env.* (default)"},
		{f.root + "/.env.example", ""},
		{f.root + "/main.go", ""},
		// A symlink in the project that leads to a key.
		{f.root + "/innocent.txt", "~/.ssh (default)"},
		// Beneath a denied directory; the project may add patterns.
		{f.root + "/keys/prod.pem", "keys/ (user)"},
		{f.root + "/other/x.pem", "*.pem (project)"},
		// A file that does not exist yet is tested as a file.
		{f.root + "/new/.env", ".env (default)"},
		// Outside the project, relative patterns do not apply.
		{f.home + "/.env", ""},
	} {
		rule, ok := r.Check(tc.path)
		if tc.rule == "" {
			if ok {
				t.Errorf("Check(%s) denied by %s, want allowed", tc.path, rule)
			}
			continue
		}
		if !ok || !strings.Contains(rule, tc.rule) {
			t.Errorf("Check(%s) = %q, %v; want denied by %q", tc.path, rule, ok, tc.rule)
		}
	}
	if diff := cmp.Diff([]string{"!.env"}, r.Dropped()); diff != "" {
		t.Errorf("Dropped (-want +got):\n%s", diff)
	}
}

// TestUserLifts: the user's "!" patterns lift defaults; a project cannot.
func TestUserLifts(t *testing.T) {
	f := newFixture(t)
	r := mustNew(t, Options{Home: f.home, Root: f.root, User: []string{"!.env", "!~/.aws"}})
	for _, p := range []string{f.root + "/.env", f.home + "/.aws/credentials"} {
		if rule, ok := r.Check(p); ok {
			t.Errorf("%s denied by %s after the user lifted it", p, rule)
		}
	}
	if _, ok := r.Check(f.root + "/svc/.env.local"); !ok {
		t.Error("!.env lifted .env.* too")
	}
	// Nothing beneath a denied directory can be lifted, as in git.
	r = mustNew(t, Options{Home: f.home, Root: f.root, User: []string{"!~/.ssh/id_rsa"}})
	if _, ok := r.Check(f.home + "/.ssh/id_rsa"); !ok {
		t.Error("a file beneath denied ~/.ssh was lifted")
	}
	// The project's negations are dropped, its additions kept.
	r = mustNew(t, Options{Home: f.home, Root: f.root, Project: []string{"!.env", "!~/.ssh", "main.go"}})
	for _, p := range []string{f.root + "/.env", f.home + "/.ssh/id_rsa", f.root + "/main.go"} {
		if _, ok := r.Check(p); !ok {
			t.Errorf("%s allowed; the project may only add patterns", p)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, p := range []string{"~", "/", "../x", "~bob/.ssh", "a{b", "**"} {
		if _, err := New(Options{Home: "/home/u", Root: "/p", User: []string{p}}); err == nil {
			t.Errorf("New(User: %q) = nil error", p)
		}
	}
}

func TestHides(t *testing.T) {
	f := newFixture(t)
	r := mustNew(t, Options{Home: f.home, Root: f.root})
	if !r.Hides(f.root+"/.env", 0) || r.Hides(f.root+"/.env.example", 0) || r.Hides(f.root+"/main.go", 0) {
		t.Error("Hides disagrees with the .env defaults")
	}
	if !r.Hides(f.root+"/innocent.txt", fs.ModeSymlink) {
		t.Error("a symlink to ~/.ssh/id_rsa is not hidden")
	}
	if !r.Hides(f.home+"/.ssh", fs.ModeDir) {
		t.Error("~/.ssh is not hidden")
	}
}

func TestExisting(t *testing.T) {
	f := newFixture(t)
	r := mustNew(t, Options{Home: f.home, Root: f.root})
	want := []string{f.home + "/.aws", f.home + "/.cargo/credentials.toml", f.home + "/.ssh", f.root + "/.env", f.root + "/svc/.env.local"}
	got := r.Existing()
	if diff := cmp.Diff(want, got.Paths); diff != "" || got.Incomplete {
		t.Fatalf("Existing (-want +got):\n%s incomplete=%v", diff, got.Incomplete)
	}
	// The cached walk sees a .env created in a new directory and one that
	// was removed, whatever the timestamps' granularity.
	if err := os.MkdirAll(f.root+"/deep/er", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.root+"/deep/er/.env.prod", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.root + "/svc/.env.local"); err != nil {
		t.Fatal(err)
	}
	want = []string{f.home + "/.aws", f.home + "/.cargo/credentials.toml", f.home + "/.ssh", f.root + "/.env", f.root + "/deep/er/.env.prod"}
	if diff := cmp.Diff(want, r.Existing().Paths); diff != "" {
		t.Fatalf("Existing after changes (-want +got):\n%s", diff)
	}
}

// TestExistingSymlinkTarget: a denied name that is a link into the project
// hides the link's target (the sandbox cannot mount over a link).
func TestExistingSymlinkTarget(t *testing.T) {
	f := newFixture(t)
	if err := os.Remove(f.root + "/.env"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("config/values.txt", f.root+"/.env"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.root+"/config", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.root+"/config/values.txt", []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Options{Home: f.home, Root: f.root})
	got := r.Existing().Paths
	found := false
	for _, p := range got {
		found = found || p == f.root+"/config/values.txt"
	}
	if !found {
		t.Errorf("Existing = %v, want the .env link's target", got)
	}
}

func TestFromClaude(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"Read(./.env)", "./.env"},
		{"Read(.env)", ".env"},
		{"Read(~/.aws/**)", "~/.aws/**"},
		{"Read(//etc/secret)", "/etc/secret"},
		{"Read(/config/keys/*)", "./config/keys/*"},
		{"Read(./secrets/**/*.json)", "./secrets/**/*.json"},
	} {
		got, err := FromClaude(tc.rule)
		if err != nil || got != tc.want {
			t.Errorf("FromClaude(%q) = %q, %v; want %q", tc.rule, got, err, tc.want)
		}
	}
	for _, rule := range []string{"Bash(cat *)", "Edit(./.env)", "Read", "Read(**)", "Read(~bob/x)"} {
		if got, err := FromClaude(rule); err == nil {
			t.Errorf("FromClaude(%q) = %q, want an error", rule, got)
		}
	}
	if _, err := FromClaude("WebFetch(domain:x.com)"); !errors.Is(err, ErrNotRead) {
		t.Errorf("FromClaude(WebFetch) error = %v, want ErrNotRead", err)
	}
	// The converted patterns deny what the Claude rules named.
	f := newFixture(t)
	var pats []string
	for _, rule := range []string{"Read(./keys/*.pem)", "Read(~/.cargo/config.toml)"} {
		p, err := FromClaude(rule)
		if err != nil {
			t.Fatal(err)
		}
		pats = append(pats, p)
	}
	r := mustNew(t, Options{Home: f.home, Root: f.root, User: pats})
	for _, p := range []string{f.root + "/keys/prod.pem", f.home + "/.cargo/config.toml"} {
		if _, ok := r.Check(p); !ok {
			t.Errorf("%s is readable despite the converted Claude rule", p)
		}
	}
}

// TestExistingSkipDirs: Odin's own directories inside the project are not
// walked (their caches change with every build).
func TestExistingSkipDirs(t *testing.T) {
	f := newFixture(t)
	state := filepath.Join(f.root, ".state")
	if err := os.MkdirAll(filepath.Join(state, "cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "cache", ".env"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Options{Home: f.home, Root: f.root, SkipDirs: []string{state}})
	for _, p := range r.Existing().Paths {
		if strings.HasPrefix(p, state) {
			t.Errorf("Existing walked the skipped %s: %s", state, p)
		}
	}
	if _, ok := r.Check(filepath.Join(state, "cache", ".env")); !ok {
		t.Error("a skipped directory's .env is no longer denied to the tools")
	}
}
