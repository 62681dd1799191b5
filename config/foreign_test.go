package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestForeignLayers(t *testing.T) {
	f := newFixture(t, "permissions:\n  allowed_commands: [\"go test *\"]\nmodels:\n  main: from-user-yaml\n",
		"permissions:\n  allowed_commands: [\"make *\"]\n")
	opts := f.options(nil, nil)
	opts.Foreign = []ForeignLayer{
		{Label: "/home/u/.claude/settings.json", Tree: map[string]any{
			"models":      map[string]any{"main": "from-claude-user", "small": "small-from-claude"},
			"permissions": map[string]any{"allowed_commands": []any{"npm test *"}, "forbidden_commands": []any{"rm *"}},
		}},
		{Label: "/p/.claude/settings.json", Project: true, Tree: map[string]any{
			"permissions": map[string]any{"allowed_commands": []any{"touch *"}, "forbidden_commands": []any{"curl *"},
				"deny_read": []any{"./secrets.yaml"}},
			"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "ExecuteCommand", "command": "guard.sh"}}},
		}},
	}
	cfg, src, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	// The user's odin.yaml wins a scalar; the lists of both add up.
	if cfg.Models.Main != "from-user-yaml" || cfg.Models.Small != "small-from-claude" {
		t.Errorf("models = %+v", cfg.Models)
	}
	if got := src.Origin("models.small"); got != "/home/u/.claude/settings.json" {
		t.Errorf("origin of models.small = %q", got)
	}
	// The project's lists replace the user's, as odin.yaml's do; the
	// project's foreign allow adds to the project's odin.yaml.
	if d := cmp.Diff([]string{"make *", "touch *"}, cfg.Permissions.AllowedCommands); d != "" {
		t.Errorf("allowed (-want +got):\n%s", d)
	}
	for _, want := range []string{"rm *", "curl *"} {
		if !slices.Contains(cfg.Permissions.ForbiddenCommands, want) {
			t.Errorf("forbidden %v lacks %q", cfg.Permissions.ForbiddenCommands, want)
		}
	}
	if d := cmp.Diff([]string{"./secrets.yaml"}, cfg.Permissions.ProjectDenyRead); d != "" {
		t.Errorf("project deny_read (-want +got):\n%s", d)
	}
	keys := strings.Join(src.ProjectWidens(), " ")
	if !strings.Contains(keys, "hooks.PreToolUse") || !strings.Contains(keys, "permissions.allowed_commands") {
		t.Errorf("trust items %q lack the project's foreign hook and allow list", keys)
	}

	// Untrusted: the hook and the allow list are dropped, the denials stay.
	opts.IgnoreProjectWidening = true
	cfg, _, err = Load(opts)
	if err != nil {
		t.Fatalf("Load untrusted: %v", err)
	}
	if len(cfg.Hooks["PreToolUse"]) != 0 || slices.Contains(cfg.Permissions.AllowedCommands, "touch *") {
		t.Errorf("untrusted project's foreign settings applied: hooks %v allowed %v", cfg.Hooks, cfg.Permissions.AllowedCommands)
	}
	if !slices.Contains(cfg.Permissions.ForbiddenCommands, "curl *") || !slices.Contains(cfg.Permissions.ProjectDenyRead, "./secrets.yaml") {
		t.Errorf("untrusted project's denials lost: %v %v", cfg.Permissions.ForbiddenCommands, cfg.Permissions.ProjectDenyRead)
	}
}

func TestForeignProblemNamesTheFile(t *testing.T) {
	f := newFixture(t, "", "")
	opts := f.options(nil, nil)
	opts.Foreign = []ForeignLayer{{Label: "/p/opencode.json", Project: true, Tree: map[string]any{"modle": "x"}}}
	_, _, err := Load(opts)
	if err == nil || !strings.Contains(err.Error(), "/p/opencode.json") {
		t.Fatalf("err = %v, want a problem naming the file", err)
	}
}

// MergeForeign: the later tree wins a scalar, maps merge, lists add up
// without repeats, and the trees given are left as they were.
func TestMergeForeign(t *testing.T) {
	low := map[string]any{"mode": "ask", "permissions": map[string]any{"allowed_commands": []any{"ls *", "go test *"}}}
	high := map[string]any{"mode": "plan", "permissions": map[string]any{"allowed_commands": []any{"go test *", "make *"}, "deny_read": []any{".env"}}}
	got := MergeForeign([]map[string]any{low, high})
	want := map[string]any{"mode": "plan", "permissions": map[string]any{
		"allowed_commands": []any{"go test *", "make *", "ls *"}, "deny_read": []any{".env"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{"go test *", "make *"}, high["permissions"].(map[string]any)["allowed_commands"]); d != "" {
		t.Errorf("the higher tree was changed (-want +got):\n%s", d)
	}
}
