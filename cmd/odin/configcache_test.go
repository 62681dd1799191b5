package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/policy"
)

// A worker's cached configuration follows the project: an edit is read on
// the next load, and trust is decided afresh each time, so an untrusted
// project's widening never acts, from the cache or not.
func TestConfigCacheFollowsEditsAndTrust(t *testing.T) {
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(work, "home"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	yaml := filepath.Join(root, config.FileName)
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(yaml, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := &globalFlags{dir: root, logLevel: "error", configs: config.NewCache()}
	load := func() *app {
		t.Helper()
		a, err := loadApp(g)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a
	}
	allows := func(a *app, cmd string) bool { return slices.Contains(a.cfg.Permissions.AllowedCommands, cmd) }
	trust := func(a *app) {
		t.Helper()
		if err := policy.NewTrustStore(a.stateDir, nil).Trust(root, a.trust.fingerprint); err != nil {
			t.Fatal(err)
		}
	}

	write("permissions:\n  allowed_commands: [\"make *\"]\n")
	a := load()
	if a.trust.trusted || allows(a, "make *") {
		t.Fatalf("untrusted project: trusted %v, allowed %v", a.trust.trusted, a.cfg.Permissions.AllowedCommands)
	}
	trust(a)
	b := load()
	if !b.trust.trusted || !allows(b, "make *") {
		t.Fatalf("after odin trust: trusted %v, allowed %v", b.trust.trusted, b.cfg.Permissions.AllowedCommands)
	}
	// One session's change to its configuration is not the next one's.
	b.cfg.Permissions.AllowedCommands = append(b.cfg.Permissions.AllowedCommands[:0], "rm *")
	if c := load(); !allows(c, "make *") || allows(c, "rm *") {
		t.Fatalf("a session's edit leaked into the next load: %v", c.cfg.Permissions.AllowedCommands)
	}

	// The project changes after it was trusted: read, and not trusted.
	write("permissions:\n  allowed_commands: [\"curl *\"]\n")
	d := load()
	if d.trust.trusted || allows(d, "curl *") || allows(d, "make *") {
		t.Fatalf("edited project: trusted %v, allowed %v", d.trust.trusted, d.cfg.Permissions.AllowedCommands)
	}
	trust(d)
	if e := load(); !e.trust.trusted || !allows(e, "curl *") || allows(e, "make *") {
		t.Fatalf("edited project trusted again: trusted %v, allowed %v", e.trust.trusted, e.cfg.Permissions.AllowedCommands)
	}
}
