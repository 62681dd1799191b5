package actors

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// fakeMCP is an MCP tool as internal/mcp presents one.
type fakeMCP struct{ info tool.Info }

func (f fakeMCP) Info() tool.Info { return f.info }
func (f fakeMCP) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}

func TestFilterToolsMCPPatterns(t *testing.T) {
	all := tools.NewSet(
		fakeMCP{tool.Info{Name: "ReadFile", Class: tool.ClassRead}},
		fakeMCP{tool.Info{Name: "mcp__github__get_issue", Class: tool.ClassMCP, ReadOnly: true}},
		fakeMCP{tool.Info{Name: "mcp__github__delete_repo", Class: tool.ClassMCP}},
		fakeMCP{tool.Info{Name: "mcp__docs__search", Class: tool.ClassMCP, ReadOnly: true}},
	)
	research := Builtins()[1]
	cases := []struct {
		name string
		def  *AgentDefinition
		mode messages.Mode
		want []string
	}{
		{"orchestrator gets every MCP tool", nil, messages.ModeEdit,
			[]string{"ReadFile", "mcp__github__get_issue", "mcp__github__delete_repo", "mcp__docs__search"}},
		{"read-only mode keeps readOnlyHint tools", nil, messages.ModeAsk,
			[]string{"ReadFile", "mcp__github__get_issue", "mcp__docs__search"}},
		{"research gets MCP by default", research, messages.ModeEdit,
			[]string{"ReadFile", "mcp__github__get_issue", "mcp__github__delete_repo", "mcp__docs__search"}},
		{"star does not include MCP tools", &AgentDefinition{Tools: []string{"*"}}, messages.ModeEdit,
			[]string{"ReadFile"}},
		{"glob pattern", &AgentDefinition{Tools: []string{"ReadFile", "mcp__github__get_*"}}, messages.ModeEdit,
			[]string{"ReadFile", "mcp__github__get_issue"}},
		{"Claude-style server name", &AgentDefinition{Tools: []string{"mcp__github"}}, messages.ModeEdit,
			[]string{"mcp__github__get_issue", "mcp__github__delete_repo"}},
		{"deny wins", &AgentDefinition{Tools: []string{"mcp__*"}, DisallowedTools: []string{"mcp__github__delete_*"}}, messages.ModeEdit,
			[]string{"mcp__github__get_issue", "mcp__docs__search"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FilterTools(all, c.def, c.mode, c.def != nil).Names()
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// A Claude Code agent file naming MCP tools loads (they are not checked
// against the built-in names) and gets exactly those tools.
func TestClaudeAgentFileWithMCPTools(t *testing.T) {
	dir := t.TempDir()
	file := "---\nname: triage\ndescription: Triages issues.\ntools: Read, mcp__github__get_issue\n---\nYou triage.\n"
	if err := os.WriteFile(filepath.Join(dir, "triage.md"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRoster(RosterOptions{Config: config.Default(), AgentDirs: []string{dir}, ToolNames: []string{"ReadFile", "Glob"}})
	if err != nil {
		t.Fatal(err)
	}
	def, ok := r.Get("triage")
	if !ok {
		t.Fatal("triage not loaded")
	}
	all := tools.NewSet(
		fakeMCP{tool.Info{Name: "ReadFile", Class: tool.ClassRead}},
		fakeMCP{tool.Info{Name: "mcp__github__get_issue", Class: tool.ClassMCP}},
		fakeMCP{tool.Info{Name: "mcp__github__close_issue", Class: tool.ClassMCP}},
	)
	if diff := cmp.Diff([]string{"ReadFile", "mcp__github__get_issue"}, FilterTools(all, def, messages.ModeEdit, true).Names()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}
