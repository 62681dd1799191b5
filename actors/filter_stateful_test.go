package actors

import (
	"slices"
	"testing"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
)

// The stateful tools (issue #36) are offered in edit mode to the agents
// that list them, never in ask or plan mode, never to an agent held to
// command patterns, and never to the Orchestrator.
func TestStatefulToolsFilter(t *testing.T) {
	all := tools.Builtin(tools.BuiltinOptions{})
	both := []string{tools.NameShellSession, tools.NamePython}
	var code *AgentDefinition
	for _, a := range Builtins() {
		if a.Name == "code" {
			code = a
		}
	}
	cases := []struct {
		name       string
		def        *AgentDefinition
		mode       messages.Mode
		have, lack []string
	}{
		{"opted in, edit", &AgentDefinition{Tools: []string{"ReadFile", "ShellSession", "Python"}}, messages.ModeEdit, both, nil},
		{"opted in, ask", &AgentDefinition{Tools: []string{"ReadFile", "ShellSession", "Python"}}, messages.ModeAsk, []string{"ReadFile"}, both},
		{"opted in, plan", &AgentDefinition{Tools: []string{"*"}}, messages.ModePlan, nil, both},
		{"command patterns", &AgentDefinition{Tools: []string{"*"}, CommandPatterns: []string{"go test *"}}, messages.ModeEdit, []string{"ExecuteCommand"}, both},
		{"not listed", &AgentDefinition{Tools: []string{"ReadFile", "ExecuteCommand"}}, messages.ModeEdit, nil, both},
		{"code by default", code, messages.ModeEdit, []string{"ShellSession"}, []string{"Python"}},
		{"orchestrator", nil, messages.ModeEdit, []string{"ExecuteCommand"}, both},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FilterTools(all, c.def, c.mode, c.def != nil).Names()
			for _, n := range c.have {
				if !slices.Contains(got, n) {
					t.Errorf("%s missing from %v", n, got)
				}
			}
			for _, n := range c.lack {
				if slices.Contains(got, n) {
					t.Errorf("%s offered: %v", n, got)
				}
			}
		})
	}
}
