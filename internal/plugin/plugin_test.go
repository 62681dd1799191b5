package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
)

func sample(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "deploy-guard"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadClaudeCodePlugin(t *testing.T) {
	dir := sample(t)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "deploy-guard" || p.Version != "1.2.0" {
		t.Errorf("name %q version %q", p.Name, p.Version)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "agents")}, p.AgentDirs); diff != "" {
		t.Errorf("agent dirs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"changelog-writer"}, p.Agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"release-notes"}, p.Commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	wantHooks := map[string][]config.Hook{
		"PreToolUse": {{Matcher: "ExecuteCommand", Command: `"` + dir + `/scripts/guard.sh"`, Timeout: 10 * time.Second, PluginRoot: dir,
			ToolNames: map[string]string{"ExecuteCommand": "Bash", "ReadFile": "Read", "WriteFile": "Write", "EditTool": "Edit", "MultiEditTool": "MultiEdit"}}},
	}
	if diff := cmp.Diff(wantHooks, p.Hooks); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	wantMCP := map[string]config.MCPServer{"release-db": {Command: dir + "/bin/release-db",
		Args: []string{"--data", dir + "/data"}, Env: map[string]string{"RELEASE_DB_MODE": "read-only", "CLAUDE_PLUGIN_ROOT": dir}}}
	if diff := cmp.Diff(wantMCP, p.MCPServers); diff != "" {
		t.Errorf("mcp servers (-want +got):\n%s", diff)
	}
	wantUnsupported := []string{
		`hooks.PreToolUse matcher "Notebook.*": "Notebook.*" is a pattern; Odin matches exact names`,
		`hooks.SessionStart: Odin has no such event`,
		`hooks.Stop: hook type "prompt": Odin runs command hooks only`,
		`skills changelog-style: Odin has no skills`,
	}
	if diff := cmp.Diff(wantUnsupported, p.Unsupported); diff != "" {
		t.Errorf("unsupported (-want +got):\n%s", diff)
	}
}

func writePlugin(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no manifest", map[string]string{"agents/a.md": "x"}, "no .claude-plugin/plugin.json"},
		{"bad name", map[string]string{ManifestPath: `{"name": "Bad Name"}`}, `plugin.json: name: must be kebab-case`},
		// Where the decoder stopped: line 3, column 13 (the stray comma).
		{"bad json", map[string]string{ManifestPath: "{\n  \"name\": \"p\",\n  \"agents\": ,\n}"}, "plugin.json:3:13: invalid JSON"},
		{"bad mcp json", map[string]string{ManifestPath: `{"name": "p"}`, ".mcp.json": "{\n\n  x"}, ".mcp.json:3:3: invalid JSON"},
		{"path out", map[string]string{ManifestPath: `{"name": "p", "agents": "../elsewhere"}`}, `agents: "../elsewhere" leads outside the plugin`},
		{"bad hooks", map[string]string{ManifestPath: `{"name": "p"}`, "hooks/hooks.json": `{"hooks": [1]}`}, "hooks.json: hooks:"},
		{"bad server", map[string]string{ManifestPath: `{"name": "p"}`, ".mcp.json": `{"mcpServers": {"a__b": {"command": "x"}}}`}, "mcpServers.a__b: a server name"},
		{"server without command", map[string]string{ManifestPath: `{"name": "p"}`, ".mcp.json": `{"mcpServers": {"s": {}}}`}, "mcpServers.s: needs command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePlugin(t, t.TempDir(), tt.files)
			_, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestManifestPathsAndInlineComponents(t *testing.T) {
	dir := writePlugin(t, t.TempDir(), map[string]string{
		ManifestPath: `{"name": "inline", "agents": ["./more-agents"], "commands": "./extra/one.md",
			"hooks": {"PostToolUse": [{"matcher": "Write|Edit|mcp__db__query", "hooks": [{"command": "echo ${CLAUDE_PLUGIN_ROOT}"}]}]},
			"mcpServers": {"web": {"type": "http", "url": "https://mcp.example.com/${CLAUDE_PLUGIN_ROOT}"}},
			"outputStyles": "./styles"}`,
		"more-agents/helper.md": "---\nname: helper\ndescription: helps\n---\nHelp.",
		"extra/one.md":          "One.",
	})
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "more-agents")}, p.AgentDirs); diff != "" {
		t.Errorf("agent dirs (-want +got):\n%s", diff)
	}
	want := map[string][]config.Hook{"PostToolUse": {{Matcher: "WriteFile|EditTool|mcp__db__query", Command: "echo " + dir, PluginRoot: dir, ToolNames: odinToClaude}}}
	if diff := cmp.Diff(want, p.Hooks); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	if got := p.MCPServers["web"]; got.URL != "https://mcp.example.com/"+dir || got.Type != "http" {
		t.Errorf("web server = %+v", got)
	}
	joined := strings.Join(p.Unsupported, "\n")
	for _, w := range []string{"commands: ./extra/one.md is a single file", "outputStyles: not supported"} {
		if !strings.Contains(joined, w) {
			t.Errorf("unsupported %q lacks %q", joined, w)
		}
	}
}

func TestInstallFromFolderListRemove(t *testing.T) {
	data := t.TempDir()
	src := filepath.Join(t.TempDir(), "src")
	if _, err := copyTree(sample(t), src); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(src, "agents", "leak.md")); err != nil {
		t.Fatal(err)
	}
	p, notes, err := Install(t.Context(), data, src)
	if err != nil {
		t.Fatal(err)
	}
	if p.Dir != filepath.Join(Dir(data), "deploy-guard") || len(p.Agents) != 1 {
		t.Errorf("installed %s with agents %v", p.Dir, p.Agents)
	}
	if diff := cmp.Diff([]string{"agents/leak.md: a symlink, not copied"}, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(p.Dir, "agents", "leak.md")); err == nil {
		t.Error("a symlink out of the plugin was installed")
	}
	if fi, err := os.Stat(filepath.Join(p.Dir, "scripts", "guard.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("guard.sh lost its executable bit: %v %v", fi, err)
	}
	if _, _, err := Install(t.Context(), data, src); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Errorf("second install: %v", err)
	}

	if err := SetEnabled(data, "deploy-guard", false); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	writePlugin(t, filepath.Join(project, ".odin", "plugins", "local"), map[string]string{ManifestPath: `{"name": "local-tools"}`})
	writePlugin(t, filepath.Join(project, ".odin", "plugins", "clash"), map[string]string{ManifestPath: `{"name": "deploy-guard"}`})
	all, problems := Discover(data, ProjectDirs(project))
	if len(all) != 2 || all[0].Name != "deploy-guard" || !all[0].Disabled || all[0].Project ||
		all[1].Name != "local-tools" || all[1].Disabled || !all[1].Project {
		t.Errorf("discovered %+v", all)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "the name is taken by") {
		t.Errorf("problems %q", problems)
	}
	if err := SetEnabled(data, "deploy-guard", true); err != nil {
		t.Fatal(err)
	}
	if all, _ := Discover(data, nil); all[0].Disabled {
		t.Error("enable did not stick")
	}

	if err := Remove(data, "deploy-guard"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Dir); err == nil {
		t.Error("remove left the plugin")
	}
	if err := Remove(data, "deploy-guard"); err == nil {
		t.Error("removing a missing plugin succeeded")
	}
	if err := Remove(data, "../x"); err == nil {
		t.Error("remove accepted a path")
	}
}

// TestInstallFromGitRunsNothing: attack — cloning a plugin must not run
// git hooks, whether from a template directory (GIT_TEMPLATE_DIR, as a
// hostile environment could set) or a hooks path: the canary the
// post-checkout hook would create never appears.
func TestInstallFromGitRunsNothing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	if _, err := copyTree(sample(t), repo); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "plugin")

	canary := filepath.Join(t.TempDir(), "canary")
	tmpl := filepath.Join(t.TempDir(), "template")
	hook := "#!/bin/sh\ntouch " + canary + "\n"
	for _, d := range []string{filepath.Join(tmpl, "hooks")} {
		writePlugin(t, d, map[string]string{"post-checkout": hook})
		if err := os.Chmod(filepath.Join(d, "post-checkout"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GIT_TEMPLATE_DIR", tmpl)

	data := t.TempDir()
	p, _, err := Install(t.Context(), data, "file://"+repo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("a git hook ran while the plugin was cloned")
	}
	if p.Name != "deploy-guard" || len(p.Hooks["PreToolUse"]) != 1 {
		t.Errorf("cloned plugin %+v", p)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, ".git")); err == nil {
		t.Error("the installed plugin kept its .git")
	}
	if _, _, err := Install(t.Context(), data, "file://"+filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "git clone") {
		t.Errorf("clone of a missing repository: %v", err)
	}
}
