package actors

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// placement: remote is for read-only agents and for writers that work in
// a worktree of their own; any other writer is refused at load with an
// error naming the agent and the isolation key it needs.
func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agents map[string]config.Agent
		agent  string
		want   Placement
		err    string // a substring of the error, "" for none
	}{
		{name: "default", agents: nil, agent: "search", want: ""},
		{name: "search remote", agents: map[string]config.Agent{"search": {Placement: "remote"}}, agent: "search", want: PlacementRemote},
		{name: "review any", agents: map[string]config.Agent{"review": {Placement: "any"}}, agent: "review", want: PlacementAny},
		{name: "code remote", agents: map[string]config.Agent{"code": {Placement: "remote"}}, agent: "code", err: "odin.yaml: agents.code.placement: agent code can write files"},
		{name: "code remote names the key", agents: map[string]config.Agent{"code": {Placement: "any"}}, agent: "code", err: "Set agents.code.isolation: worktree"},
		{name: "code remote isolated", agents: map[string]config.Agent{"code": {Placement: "remote", Isolation: "worktree"}}, agent: "code", want: PlacementRemote},
		{name: "custom writer isolated", agents: map[string]config.Agent{"doer": {Description: "d", Prompt: "p", Placement: "any", Isolation: "worktree"}}, agent: "doer", want: PlacementAny},
		{name: "test local", agents: map[string]config.Agent{"test": {Placement: "local"}}, agent: "test", want: PlacementLocal},
		{name: "custom reader", agents: map[string]config.Agent{"finder": {Description: "d", Prompt: "p", Tools: []string{"Grep", "ReadFile"}, Placement: "remote"}}, agent: "finder", want: PlacementRemote},
		{name: "custom all tools", agents: map[string]config.Agent{"doer": {Description: "d", Prompt: "p", Placement: "remote"}}, agent: "doer", err: "isolation: worktree"},
		{name: "custom all tools in plan", agents: map[string]config.Agent{"planner": {Description: "d", Prompt: "p", PermissionMode: "plan", Placement: "any"}}, agent: "planner", want: PlacementAny},
		{name: "writer denied its writes", agents: map[string]config.Agent{"ro": {Description: "d", Prompt: "p", Tools: []string{"Grep", "WriteFile"}, DisallowedTools: []string{"WriteFile"}, Placement: "remote"}}, agent: "ro", want: PlacementRemote},
		{name: "bad value", agents: map[string]config.Agent{"search": {Placement: "everywhere"}}, agent: "search", err: `agents.search.placement: invalid placement "everywhere"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := LoadRoster(RosterOptions{Config: &config.Config{Agents: tc.agents}})
			if tc.err != "" {
				var re *RosterError
				if !errors.As(err, &re) || re.Key != "placement" || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want a placement error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, ok := r.Get(tc.agent)
			if !ok || a.Placement != tc.want {
				t.Fatalf("%s: placement %q, want %q", tc.agent, a.Placement, tc.want)
			}
		})
	}
}

// Agent files take placement: in their front matter, under the same rule.
func TestPlacementAgentFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("finder.md", "---\nname: finder\ndescription: finds\ntools: Grep, ReadFile\nplacement: remote\n---\nFind things.\n")
	r, err := LoadRoster(RosterOptions{AgentDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := r.Get("finder"); a.Placement != PlacementRemote {
		t.Errorf("finder: placement %q", a.Placement)
	}
	write("fixer.md", "---\nname: fixer\ndescription: fixes\ntools: ReadFile, EditTool\nplacement: any\n---\nFix things.\n")
	_, err = LoadRoster(RosterOptions{AgentDirs: []string{dir}})
	var re *RosterError
	if !errors.As(err, &re) || re.Agent != "fixer" || re.Key != "placement" || !strings.Contains(err.Error(), "isolation: worktree") {
		t.Fatalf("err = %v, want fixer's placement refused for want of isolation: worktree", err)
	}
	write("fixer.md", "---\nname: fixer\ndescription: fixes\ntools: ReadFile, EditTool\nplacement: any\nisolation: worktree\n---\nFix things.\n")
	r, err = LoadRoster(RosterOptions{AgentDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := r.Get("fixer"); a.Placement != PlacementAny || a.Isolation != messages.IsolationWorktree {
		t.Errorf("fixer: placement %q, isolation %q", a.Placement, a.Isolation)
	}
}

// RunsRemote: a writer's task goes to a worker only in a worktree; the
// agent tool's isolation "none" keeps it here.
func TestRunsRemote(t *testing.T) {
	reader := &AgentDefinition{Name: "search", Tools: []string{"Grep"}, Placement: PlacementRemote}
	writer := &AgentDefinition{Name: "code", Tools: []string{"EditTool"}, Placement: PlacementRemote, Isolation: messages.IsolationWorktree}
	local := &AgentDefinition{Name: "code", Tools: []string{"EditTool"}, Isolation: messages.IsolationWorktree}
	for _, tc := range []struct {
		def  *AgentDefinition
		iso  messages.Isolation
		want bool
	}{
		{reader, "", true}, {writer, messages.IsolationWorktree, true}, {writer, messages.IsolationNone, false}, {local, messages.IsolationWorktree, false},
	} {
		if got := tc.def.RunsRemote(&messages.Delegate{Isolation: tc.iso}); got != tc.want {
			t.Errorf("%s (placement %q) with isolation %q: RunsRemote %v, want %v", tc.def.Name, tc.def.Placement, tc.iso, got, tc.want)
		}
	}
}
