package actors

import (
	"slices"
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// The Orchestrator is not offered the tools of orchestratorOmits (each
// costs every request of a session its definition), while the specialists
// that explore keep them and the Orchestrator keeps seed 000's main-agent
// set: the read tools, ExecuteCommand, TodoWrite, ContextSummarizer and,
// in edit mode, the write tools with InitTool. It has RepoMap, which
// every specialist has too: their lists then start alike (see Builtin).
func TestOrchestratorToolSet(t *testing.T) {
	all := tools.Builtin(tools.BuiltinOptions{})
	roster := map[string]*AgentDefinition{}
	for _, a := range Builtins() {
		roster[a.Name] = a
	}
	cases := []struct {
		name       string
		def        *AgentDefinition
		mode       messages.Mode
		have, lack []string
	}{
		{"orchestrator, edit", nil, messages.ModeEdit,
			[]string{"LS", "Glob", "Grep", "ReadFile", "RepoMap", "GitDiff", "WriteFile", "EditTool", "MultiEditTool", "InitTool", "ExecuteCommand", "TodoWrite", "Think", "ContextSummarizer"},
			[]string{"Tree", "ShellSession", "Python"}},
		{"orchestrator, ask", nil, messages.ModeAsk,
			[]string{"LS", "Glob", "Grep", "ReadFile", "ExecuteCommand", "TodoWrite", "ContextSummarizer"},
			[]string{"Tree", "WriteFile", "InitTool"}},
		{"search keeps Tree and RepoMap", roster["search"], messages.ModeAsk, []string{"Tree", "RepoMap", "Glob"}, nil},
		{"init keeps Tree and RepoMap", roster["init"], messages.ModeAsk, []string{"Tree", "RepoMap"}, nil},
		{"an agent allowed * keeps them", &AgentDefinition{Tools: []string{"*"}}, messages.ModeEdit, []string{"Tree", "RepoMap", "InitTool"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FilterTools(all, c.def, c.mode, c.def != nil).Names()
			for _, n := range c.have {
				if !slices.Contains(got, n) {
					t.Errorf("lacks %s: %v", n, got)
				}
			}
			for _, n := range c.lack {
				if slices.Contains(got, n) {
					t.Errorf("offers %s: %v", n, got)
				}
			}
		})
	}
}
