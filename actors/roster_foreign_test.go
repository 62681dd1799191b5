package actors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
)

// Agent files written for opencode and Claude Code: opencode's tools map
// is toggles over every tool, Claude's Bash(...) spec restricts
// ExecuteCommand to its pattern.
func TestForeignAgentFileTools(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".opencode", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"reviewer.md": "---\ndescription: Reviews\nmode: subagent\nmodel: main\ntemperature: 0.1\ntop_p: 0.9\ntools:\n  write: false\n  bash: false\npermission:\n  edit: deny\n---\nReview.\n",
		"only.md":     "---\ndescription: Reads only\ntools:\n  \"*\": false\n  read: true\n  grep: true\n---\nRead.\n",
		"differ.md":   "---\ndescription: Diffs\ntools: Read, Bash(git diff:*), Bash(git log:*)\n---\nDiff.\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := LoadRoster(RosterOptions{Config: config.Default(), ConfigDir: root, AgentDirs: []string{dir}})
	if err != nil {
		t.Fatalf("LoadRoster: %v", err)
	}
	type got struct{ Tools, Disallowed, Patterns []string }
	for name, want := range map[string]got{
		"reviewer": {Tools: []string{"*"}, Disallowed: []string{"ExecuteCommand", "WriteFile"}},
		"only":     {Tools: []string{"Grep", "ReadFile"}},
		"differ":   {Tools: []string{"ReadFile", "ExecuteCommand"}, Patterns: []string{"git diff *", "git log *"}},
	} {
		def, ok := r.Get(name)
		if !ok {
			t.Fatalf("agent %s missing", name)
		}
		have := got{Tools: def.Tools, Disallowed: def.DisallowedTools, Patterns: def.CommandPatterns}
		if d := cmp.Diff(want, have); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
}

func TestSimpleCommand(t *testing.T) {
	for cmd, ok := range map[string]bool{
		"git diff --stat":           true,
		`git diff "a b"`:            true,
		"git diff; rm x":            false,
		"git diff | sh":             false,
		"git diff $(rm x)":          false,
		"git diff $HOME":            false,
		"git diff > out":            false,
		"FOO=1 git diff":            false,
		"git diff && touch x":       false,
		"git diff `touch x`":        false,
		"git diff <(cat /etc/pass)": false,
	} {
		if _, got := simpleCommand(cmd); got != ok {
			t.Errorf("simpleCommand(%q) ok = %v, want %v", cmd, got, ok)
		}
	}
}
