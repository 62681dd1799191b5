package actors

import (
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Placement is where an agent's tasks run when the session is on a
// cluster (issue 35): on the session's node, on a worker's specialist
// host, or on a worker when one is up.
type Placement string

// Placements.
const (
	PlacementLocal  Placement = "local"
	PlacementRemote Placement = "remote"
	PlacementAny    Placement = "any"
)

// writingTools are the tools that change the project or run commands in
// it: an agent allowed any of them is not read-only, and a worker's copy
// of the tree is not where its changes could land.
var writingTools = []string{"*", "WriteFile", "EditTool", "MultiEditTool", "ExecuteCommand", "Python", "ShellSession"}

// ReadOnly reports whether the agent can change nothing: its permission
// mode caps it at ask or plan, or none of its tools writes or runs
// commands.
func (a *AgentDefinition) ReadOnly() bool {
	if a.PermissionMode == messages.ModeAsk || a.PermissionMode == messages.ModePlan {
		return true
	}
	for _, t := range a.Tools {
		if slices.Contains(writingTools, t) && !slices.Contains(a.DisallowedTools, t) {
			return false
		}
	}
	return true
}

// Remote reports whether the agent's tasks go to a worker when one can
// take them.
func (a *AgentDefinition) Remote() bool {
	return a.Placement == PlacementRemote || a.Placement == PlacementAny
}

// applyPlacement sets an entry's placement key.
func applyPlacement(a *AgentDefinition, value string, rerr func(key, problem string) error) error {
	switch Placement(value) {
	case "":
	case PlacementLocal, PlacementRemote, PlacementAny:
		a.Placement = Placement(value)
	default:
		return rerr("placement", fmt.Sprintf("invalid placement %q (want local, remote or any)", value))
	}
	return nil
}

// checkPlacement refuses a writing agent placed on a worker unless it
// works in a worktree of its own (isolation: worktree): then its change
// comes back from the worker as a patch, which the session's node
// applies as it applies a local isolated specialist's. Without isolation
// its changes would land in the worker's throw-away tree.
func checkPlacement(a *AgentDefinition, rerr func(key, problem string) error) error {
	if !a.Remote() || a.ReadOnly() || a.Isolation == messages.IsolationWorktree {
		return nil
	}
	return rerr("placement", fmt.Sprintf("agent %s can write files or run commands, so it can run on another node (placement: %s) only with isolation: worktree, "+
		"whose patch is carried back and applied on the session's node. Set agents.%s.isolation: worktree (isolation: worktree in an agent file), "+
		"use placement: local, or make the agent read-only (no write or command tools, or permission_mode ask or plan)", a.Name, a.Placement, a.Name))
}

// RunsRemote reports whether the task d of the agent goes to a worker
// when one can take it: the agent is placed remote or any, and it is
// read-only or works in a worktree of its own for this task (the agent
// tool's isolation "none" keeps a writer's task here).
func (a *AgentDefinition) RunsRemote(d *messages.Delegate) bool {
	return a.Remote() && (a.ReadOnly() || d.Isolation == messages.IsolationWorktree)
}

// RemoteSpecialists places the tasks of agents whose placement is remote
// or any on other nodes (internal/cluster implements it); Deps.Remote
// nil runs every task here.
type RemoteSpecialists interface {
	// Props returns the props of the stand-in the Orchestrator spawns
	// instead of the specialist: it receives the Delegate, runs the task
	// on a worker (or run.Local here, when no worker can) and sends its
	// parent what a specialist would (AgentProgress, one Report).
	Props(run RemoteRun) *actor.Props
}

// RemoteRun is one task to place.
type RemoteRun struct {
	Agent *AgentDefinition
	// Root is the session's project root: the worker's copy is made from
	// it and the paths in the report are mapped back to it.
	Root string
	// DenyRead is what the session may not read: those files are not
	// shipped to a worker.
	DenyRead tool.ReadDeny
	// Local is the specialist that runs the task on this node.
	Local *actor.Props
	// Publish sends an event to the session's bus (a re-delegation's
	// agent_restarted).
	Publish func(messages.Event)
	// Supervisor is how the stand-in supervises Local, as the
	// Orchestrator supervises its specialists.
	Supervisor actor.SupervisorStrategy
}

// FromSpecialist reports whether msg is one a specialist sends its
// parent (progress, crash notes, supervision checks, its report): a
// stand-in passes those up and the rest (the parent's go-aheads) down.
func FromSpecialist(msg any) bool {
	switch msg.(type) {
	case *messages.Report, *messages.AgentProgress, *messages.ResearchRequest, *specialistCrashed, *reportPending, *stepCheck:
		return true
	}
	return false
}

// specialistSupervisor is the Orchestrator's supervision of its
// specialists, from the configuration.
func specialistSupervisor(deps *Deps) actor.SupervisorStrategy {
	sup := deps.Config.Supervision
	window := sup.Window
	if window <= 0 {
		window = time.Minute
	}
	return actor.NewOneForOneStrategy(sup.MaxRestarts, window, func(any) actor.Directive { return actor.RestartDirective })
}

// SpecialistProps returns the props of a specialist that resolves its
// Delegate against deps — a worker's, rooted at its copy of the session's
// tree — and reports to its parent. It keeps no transcript (no journal)
// and joins no change set: it is for read-only agents and for isolated
// writers, whose changes stay in their own worktree (deps.Worktrees) and
// come back as the report's patch.
func SpecialistProps(deps *Deps) *actor.Props {
	return newSpecialistProps(&specialistHost{deps: deps, changeSets: &changeSets{}})
}
