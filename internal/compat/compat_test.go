package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/config"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBashPattern(t *testing.T) {
	for in, want := range map[string]string{
		"curl:*":           "curl *",
		"npm run test:*":   "npm run test *",
		"git diff *":       "git diff *",
		"make build":       "make build",
		" go test ./...:*": "go test ./... *",
	} {
		if got := BashPattern(in); got != want {
			t.Errorf("BashPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadPattern(t *testing.T) {
	proj := "/p/.claude"
	for in, want := range map[string]string{
		"./.env":      "./.env",
		"//etc/x":     "/etc/x",
		"~/.netrc":    "~/.netrc",
		"/secrets/**": "./secrets/**",
		"*.pem":       "*.pem",
	} {
		if got := ReadPattern(in, proj); got != want {
			t.Errorf("ReadPattern(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ReadPattern("/x", "/home/u/.config"); got != "/home/u/.config/x" {
		t.Errorf("user-file /x = %q", got)
	}
}

func TestClaudeSettingsPrecedenceAndMapping(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(home, ClaudeSettings), `{"permissions":{"deny":["Bash(rm:*)"]},"model":"user-model"}`)
	write(t, filepath.Join(root, ClaudeSettings), `{
	  "permissions":{"allow":["Bash(go test:*)","Bash(git push:*)","WebFetch(domain:go.dev)"],
	    "deny":["Read(./.env.local)","Edit(./docs/**)"],"ask":["Bash(git push:*)"],"defaultMode":"plan"},
	  "hooks":{"PostToolUse":[{"matcher":"Write|Edit|Notebook.*","hooks":[{"type":"command","command":"fmt.sh","timeout":5}]}]},
	  "env":{"FOO":"1","LD_PRELOAD":"/evil.so"},
	  "model":"project-model","spinnerTipsEnabled":false}`)
	write(t, filepath.Join(root, ClaudeLocalSettings), `{"model":"local-model"}`)
	r := Discover(Options{Root: root, Home: home, Peers: []Peer{Claude}})
	if len(r.Layers) != 3 {
		t.Fatalf("layers = %d, want 3 (user, project, local)", len(r.Layers))
	}
	merged := merge(r.Layers)
	want := map[string]any{
		"models": map[string]any{"main": "local-model"},
		"mode":   "plan",
		"permissions": map[string]any{
			"allowed_commands":   []any{"go test *"},
			"forbidden_commands": []any{"rm *"},
			"deny_read":          []any{"./.env.local"},
			"env":                []any{"FOO"},
		},
		"hooks": map[string]any{"PostToolUse": []any{
			map[string]any{"matcher": "WriteFile|EditTool", "command": "fmt.sh", "timeout": "5s"},
		}},
	}
	if d := cmp.Diff(want, merged); d != "" {
		t.Errorf("merged tree (-want +got):\n%s", d)
	}
	var notes []string
	for _, n := range r.Notes {
		notes = append(notes, n.String())
	}
	all := strings.Join(notes, "\n")
	for _, w := range []string{"spinnerTipsEnabled", "Edit(./docs/**)", "Notebook.*", "env.LD_PRELOAD"} {
		if !strings.Contains(all, w) {
			t.Errorf("notes do not name %s:\n%s", w, all)
		}
	}
	if r.Layers[1].Env["FOO"] != "1" || r.Layers[1].Env["LD_PRELOAD"] != "" {
		t.Errorf("env = %v", r.Layers[1].Env)
	}
}

func TestClaudeBadJSONIsANote(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ClaudeSettings), `{"permissions": [`)
	r := Discover(Options{Root: root, Peers: []Peer{Claude}})
	if len(r.Layers) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0].Msg, "invalid JSON") {
		t.Fatalf("got layers %v notes %v", r.Layers, r.Notes)
	}
}

func TestCodex(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".codex", CodexConfig), `
model = "gpt-5"
model_provider = "local"
approval_policy = "never"
[model_providers.local]
name = "Local"
base_url = "http://localhost:11434/v1"
env_key = "LOCAL_KEY"
wire_api = "responses"
[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
env = { MODE = "ro" }
enabled = false
[mcp_servers.web]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "WEB_TOKEN"
[profiles.fast]
model = "small-1"
model_provider = "nowhere"
`)
	r := Discover(Options{Home: home, Peers: []Peer{Codex}})
	if len(r.Layers) != 1 {
		t.Fatalf("layers = %v, notes %v", r.Layers, r.Notes)
	}
	want := map[string]any{
		"provider":  "local",
		"models":    map[string]any{"main": "gpt-5"},
		"providers": map[string]any{"local": map[string]any{"base_url": "http://localhost:11434/v1", "api_key_env": "LOCAL_KEY"}},
		"mcp": map[string]any{"servers": map[string]any{
			"docs": map[string]any{"command": "docs-mcp", "args": []any{"--stdio"}, "env": map[string]any{"MODE": "ro"}, "disabled": true},
			"web":  map[string]any{"url": "https://mcp.example.com/mcp", "bearer_token_env": "WEB_TOKEN"},
		}},
	}
	if d := cmp.Diff(want, r.Layers[0].Tree); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"models.main": "small-1"}, r.Profiles["fast"].Keys); d != "" {
		t.Errorf("profile (-want +got):\n%s", d)
	}
	var all []string
	for _, n := range r.Notes {
		all = append(all, n.Key)
	}
	if d := cmp.Diff([]string{"approval_policy", "model_providers.local.wire_api", "profiles.fast.model_provider"}, all); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

func TestOpencodeToolMapIsToggles(t *testing.T) {
	dis, unknown := OpencodeToolMap(map[string]bool{"write": false, "bash": false, "read": true, "frobnicate": false})
	if d := cmp.Diff([]string{"ExecuteCommand", "WriteFile"}, dis); d != "" {
		t.Errorf("disallowed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"frobnicate"}, unknown); d != "" {
		t.Errorf("unknown (-want +got):\n%s", d)
	}
}

func TestOpencode(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, OpencodeFile), `{
	  "model": "local/qwen3",
	  "provider": {"local": {"options": {"baseURL": "http://localhost:1234/v1", "apiKey": "{env:LOCAL_KEY}"}}},
	  "mcp": {"fs": {"type": "local", "command": ["npx", "-y", "fs-mcp"], "environment": {"A": "b"}},
	          "off": {"type": "remote", "url": "https://x/mcp", "enabled": false}},
	  "permission": {"bash": {"git push": "deny", "go test *": "allow", "*": "ask"}, "edit": "deny", "webfetch": "ask"},
	  "agent": {"reviewer": {"description": "Reviews", "prompt": "{file:./prompts/review.txt}", "tools": {"write": false, "edit": false}}},
	  "theme": "dark"
	}`)
	r := Discover(Options{Root: root, Peers: []Peer{Opencode}})
	if len(r.Layers) != 1 {
		t.Fatalf("layers %v notes %v", r.Layers, r.Notes)
	}
	want := map[string]any{
		"models":     map[string]any{"main": "qwen3"},
		"model_info": map[string]any{"qwen3": map[string]any{"provider": "local"}},
		"providers":  map[string]any{"local": map[string]any{"base_url": "http://localhost:1234/v1", "api_key_env": "LOCAL_KEY"}},
		"mode":       "plan",
		"mcp": map[string]any{"servers": map[string]any{
			"fs":  map[string]any{"command": "npx", "args": []any{"-y", "fs-mcp"}, "env": map[string]any{"A": "b"}},
			"off": map[string]any{"url": "https://x/mcp", "disabled": true},
		}},
		"permissions": map[string]any{"allowed_commands": []any{"go test *"}, "forbidden_commands": []any{"git push"}},
		"agents": map[string]any{"reviewer": map[string]any{"description": "Reviews",
			"prompt_file": filepath.Join(root, "prompts", "review.txt"), "disallowed_tools": []any{"EditTool", "WriteFile"}}},
	}
	if d := cmp.Diff(want, r.Layers[0].Tree); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	var keys []string
	for _, n := range r.Notes {
		keys = append(keys, n.Key)
	}
	if d := cmp.Diff([]string{"theme", "permission.webfetch"}, keys); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

// A rule Odin's policy could not compile is named, not passed on to stop
// Odin at start.
func TestBadPatternIsANote(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ClaudeSettings), `{"permissions":{"allow":["Bash(ls [z-a])","Bash(go test:*)"]}}`)
	r := Discover(Options{Root: root, Peers: []Peer{Claude}})
	if d := cmp.Diff([]any{"go test *"}, merge(r.Layers)["permissions"].(map[string]any)["allowed_commands"]); d != "" {
		t.Errorf("allowed (-want +got):\n%s", d)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0].Msg, "not a command pattern") {
		t.Errorf("notes = %v", r.Notes)
	}
}

// merge folds the layers as odin import and Load do.
func merge(layers []Layer) map[string]any {
	trees := make([]map[string]any, len(layers))
	for i, l := range layers {
		trees[i] = l.Tree
	}
	return config.MergeForeign(trees)
}
