package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/repomap"
	"github.com/odin-code/odin/tools/tool"
)

func TestRepoMapTool(t *testing.T) {
	env := newRootEnv(t)
	writeTestFile(t, env.Root, "store/store.go", "package store\n\n// Store keeps things.\ntype Store struct{}\n\nfunc (s *Store) Get(key string) (string, error) { return \"\", nil }\n")
	writeTestFile(t, env.Root, "api/api.go", "package api\n\nimport \"x/store\"\n\nfunc Serve(s *store.Store) { s.Get(\"k\") }\n")
	writeTestFile(t, env.Root, "scripts/tool.py", "class Runner:\n    def run(self, n):\n        pass\n")
	pool := repomap.NewPool(repomap.Options{CacheDir: t.TempDir()})
	defer pool.Close()
	tool := NewRepoMap(pool)

	res := runTool(t, tool, env, map[string]any{})
	if res.IsError {
		t.Fatal(res.Output)
	}
	for _, want := range []string{"store/store.go\n  4 type Store struct\n  6 func (s *Store) Get(key string) (string, error)", "api/api.go\n  5 func Serve(s *store.Store)", "  1 class Runner", "  2 Runner: def run(self, n)"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("map lacks %q:\n%s", want, res.Output)
		}
	}
	if strings.Index(res.Output, "store/store.go") > strings.Index(res.Output, "api/api.go") {
		t.Errorf("store (referenced) should come before api:\n%s", res.Output)
	}
	meta := res.Meta.(RepoMapMeta)
	if meta.Files != 3 || meta.Shown != 5 || meta.Parsed != 3 || meta.Tokens > repomap.DefaultBudget {
		t.Errorf("meta = %+v", meta)
	}

	scoped := runTool(t, tool, env, map[string]any{"path": "scripts", "budget_tokens": 128})
	if scoped.IsError || strings.Contains(scoped.Output, "store.go") || !strings.Contains(scoped.Output, "class Runner") {
		t.Errorf("scoped map:\n%s", scoped.Output)
	}
	if m := scoped.Meta.(RepoMapMeta); m.Parsed != 0 {
		t.Errorf("second call reparsed %d unchanged files", m.Parsed)
	}

	abs := runTool(t, tool, env, map[string]any{"path": filepath.Join(env.Root, "store", "store.go")})
	if abs.IsError || !strings.Contains(abs.Output, "type Store struct") || strings.Contains(abs.Output, "api.go") {
		t.Errorf("map of one file:\n%s", abs.Output)
	}
}

func TestRepoMapToolRefusals(t *testing.T) {
	env := newRootEnv(t)
	tl := NewRepoMap(nil)
	outside := runTool(t, tl, env, map[string]any{"path": t.TempDir()})
	if !outside.IsError || !outside.Denied {
		t.Errorf("a path outside the project was mapped: %+v", outside)
	}
	if res := runTool(t, tl, env, map[string]any{"budget_tokens": 100000}); !res.IsError {
		t.Errorf("a budget over the maximum was accepted: %s", res.Output)
	}
	empty := runTool(t, tl, env, map[string]any{})
	if empty.IsError || !strings.HasPrefix(empty.Output, "No definitions found") {
		t.Errorf("empty project: %+v", empty)
	}
	if NewRepoMap(nil).Info().Class != tool.ClassRead {
		t.Error("RepoMap must be read-only")
	}
}
