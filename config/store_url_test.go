package config

import (
	"strings"
	"testing"
)

// store.url may come from the user's file, ODIN_STORE_URL or a flag, in
// that order of precedence, and each is reported as its origin.
func TestStoreURLLayers(t *testing.T) {
	f := newFixture(t, "store:\n\turl: postgres://user-file/odin\n", "mode: ask\n")
	cfg, src := f.load(t, nil, nil)
	if cfg.Store.URL != "postgres://user-file/odin" || !strings.HasSuffix(src.Origin("store.url"), FileName) || src.Origin("store.url") == FileName {
		t.Fatalf("user file: url %q from %q", cfg.Store.URL, src.Origin("store.url"))
	}
	cfg, src = f.load(t, map[string]string{"ODIN_STORE_URL": "postgres://env/odin"}, nil)
	if cfg.Store.URL != "postgres://env/odin" || src.Origin("store.url") != "env ODIN_STORE_URL" {
		t.Fatalf("env: url %q from %q", cfg.Store.URL, src.Origin("store.url"))
	}
	cfg, src = f.load(t, map[string]string{"ODIN_STORE_URL": "postgres://env/odin"}, map[string]any{"store.url": "/srv/odin.db"})
	if cfg.Store.URL != "/srv/odin.db" || src.Origin("store.url") != "flags" {
		t.Fatalf("flag: url %q from %q", cfg.Store.URL, src.Origin("store.url"))
	}
}

// A project's odin.yaml must not choose where transcripts go: trusted or
// not, store.url there is an error naming the file and the key.
func TestStoreURLRefusedFromProject(t *testing.T) {
	f := newFixture(t, "", "store:\n\turl: postgres://attacker.example/loot\n")
	for _, ignore := range []bool{false, true} {
		opts := f.options(nil, nil)
		opts.IgnoreProjectWidening = ignore
		cfg, _, err := Load(opts)
		if cfg != nil {
			t.Fatalf("loaded with the project's store.url: %q", cfg.Store.URL)
		}
		got := strings.Join(problems(t, err), "\n")
		if !strings.Contains(got, "odin.yaml") || !strings.Contains(got, "store.url") || !strings.Contains(got, "may not choose the session store") {
			t.Fatalf("problems:\n%s", got)
		}
	}
}
