package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRateLimitSharedAcrossApps: the apps of one process (each session of
// `odin serve` loads its own) draw from the same bucket per provider, and
// a model with a quota of its own from its own bucket.
func TestRateLimitSharedAcrossApps(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".state"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".data"))
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	if err := os.MkdirAll(filepath.Join(home, ".config", "odin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "providers:\n  openai:\n    rate_limit: {requests_per_minute: 60}\nmodel_info:\n  slow-model:\n    rate_limit: {requests_per_minute: 6}\n"
	if err := os.WriteFile(filepath.Join(home, ".config", "odin", "odin.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newRootFlags()
	var apps []*app
	for _, dir := range []string{t.TempDir(), t.TempDir()} {
		gc := *g // as serveOpener does
		gc.dir = dir
		a, err := loadApp(&gc)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		apps = append(apps, a)
	}
	ref0, err := apps[0].cfg.ResolveModel("main")
	if err != nil {
		t.Fatal(err)
	}
	ref1, err := apps[1].cfg.ResolveModel("main")
	if err != nil {
		t.Fatal(err)
	}
	l0, l1 := apps[0].limiter(ref0), apps[1].limiter(ref1)
	if l0.For(ref0.ID) != l1.For(ref1.ID) {
		t.Error("two sessions of one process draw from different buckets")
	}
	if got := l0.For(ref0.ID).Limit().RequestsPerMinute; got != 60 {
		t.Errorf("provider bucket limit = %d, want 60", got)
	}
	if l0.For("slow-model") == l0.For(ref0.ID) || l0.For("slow-model") != l1.For("SLOW-MODEL") {
		t.Error("a model with its own quota does not have one shared bucket of its own")
	}
	if got := l0.For("slow-model").Limit().RequestsPerMinute; got != 6 {
		t.Errorf("model bucket limit = %d, want 6", got)
	}
}
