package actors

import (
	"context"
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// researchRoute is where a running specialist's ResearchRequest goes: the
// Orchestrator (its parent) in the actor system, asked on behalf of the
// run taskID.
type researchRoute struct {
	system *actor.ActorSystem
	parent *actor.PID
	taskID string
}

// AgentTools is the one computation of the tools a specialist is offered
// for a message in mode: the built-in and MCP tools of all filtered by its
// roster declaration (tools, disallowed_tools, MCP patterns) and by mode
// capped at its permission_mode, then its Report tool, ResearchRequest
// when it declares it and another agent holds the researcher role, and
// the Skill tool when it is offered skills that exist. The request
// builder, `odin agents` and docs/agents.md's table all come from it, so what
// a user reads is what the model gets.
//
// The ResearchRequest tool of this listing has no Orchestrator to ask: a
// call is refused. A running specialist's tools are built with its route
// (agentToolsNow).
func AgentTools(all tools.Set, r *Roster, def *AgentDefinition, mode messages.Mode) tools.Set {
	return agentToolSet(all, def, mode, agentExtras(r, def, nil))
}

// agentToolSet is AgentTools with the agent's own tools (agentExtras)
// already built: a running specialist builds them once per task and
// recomputes only the filtered part for each request.
func agentToolSet(all tools.Set, def *AgentDefinition, mode messages.Mode, extras []tool.Tool) tools.Set {
	// Report comes last: its schema is the one definition that differs
	// between roles, so the tools before it can be a prefix agents share.
	return withLoadAndReport(agentFilter(all, def, mode).With(extras...), def)
}

// withLoadAndReport ends an agent's set: LoadTools when it has tools on
// demand (def.OnDemand), then Report, last.
func withLoadAndReport(set tools.Set, def *AgentDefinition) tools.Set {
	if load, ok := loadToolsTool(set, def.OnDemand); ok {
		set = set.With(load)
	}
	return set.With(def.ReportTool())
}

// agentExtras are the tools a specialist brings itself rather than the
// session's set: ResearchRequest (asking through route; nil lists it
// without anyone to ask) and the Skill tool.
func agentExtras(r *Roster, def *AgentDefinition, route *researchRoute) []tool.Tool {
	if r == nil {
		return nil
	}
	var out []tool.Tool
	if researcher, ok := r.ByRole(RoleResearcher); ok && def.Role != RoleResearcher && offersResearch(def) {
		wait := researcher.MaxTimeout + 2*taskGrace
		if route != nil {
			out = append(out, researchTool(route.system, route.parent, def.Name, route.taskID, wait))
		} else {
			out = append(out, unroutedResearchTool())
		}
	}
	if len(def.Skills) > 0 && !slices.Contains(def.DisallowedTools, NameSkill) {
		if offered := skillsFor(def, r.skills); len(offered) > 0 {
			out = append(out, skillTool(offered))
		}
	}
	return out
}

// unroutedResearchTool is ResearchRequest as listed outside a running
// task: the same name, description and schema, and no one to ask.
func unroutedResearchTool() tool.Tool {
	return tool.New[ResearchInput](NameResearchRequest, tool.ClassWeb, researchDescription,
		func(context.Context, *tool.Env, ResearchInput) (tool.Result, error) {
			return tool.Errorf("ResearchRequest works only inside a delegated agent run"), nil
		})
}

// agentToolsNow is a running specialist's tool set as it stands now: MCP
// tools that changed (tools/list_changed) reach its next request, and its
// ResearchRequest asks its Orchestrator. It is agentToolSet's set, built
// from the session's filtered built-ins (cached per agent and mode, see
// toolSetCache) followed by the MCP tools filtered the same way: the filter
// and the decorators judge one tool at a time, so filtering the two parts
// apart gives the tools of filtering them together, in the same order.
func (s *specialist) agentToolsNow(c actor.Context) tools.Set {
	if s.extras == nil {
		s.extras = agentExtras(s.deps.Roster, s.t.def,
			&researchRoute{system: c.ActorSystem(), parent: c.Parent(), taskID: s.t.delegate.TaskID})
		if s.extras == nil {
			s.extras = []tool.Tool{}
		}
	}
	def, mode := s.t.def, s.mode()
	e := s.host.toolSets.get(s.deps.Tools, def, mode)
	if s.deps.MCP == nil && len(s.extras) == 0 {
		return e.plain
	}
	list := e.builtin.All()
	if s.deps.MCP != nil {
		list = append(list, agentFilter(tools.NewSet(s.deps.MCP()...), def, mode).All()...)
	}
	return withLoadAndReport(tools.NewSet(append(list, s.extras...)...), def)
}

// agentFilter is the part of agentToolSet that judges each tool of all
// alone: the agent's declaration, the mode capped at its permission_mode,
// and the decorators.
func agentFilter(all tools.Set, def *AgentDefinition, mode messages.Mode) tools.Set {
	return FilterTools(all, def, EffectiveMode(def, mode), true).Map(tools.AsChecklist)
}

// toolSetCache keeps, per agent definition and mode, the session's
// built-in tools as that agent is offered them: every specialist of a
// fan-out filtered and decorated the same built-ins again, building four
// sets on the way, before its first request. The built-in set of a
// session does not change (MCP tools, which do, are filtered per request);
// an entry is still checked against the set it was built from. The zero
// value is ready; it is safe for concurrent use.
type toolSetCache struct {
	mu sync.Mutex
	m  map[toolSetKey]*toolSetEntry
}

// toolSetKey is an agent definition (a roster entry, or a task's copy
// with another model) and the mode of its task.
type toolSetKey struct {
	def  *AgentDefinition
	mode messages.Mode
}

type toolSetEntry struct {
	from    tools.Set // the built-ins it was built from
	builtin tools.Set // from, filtered and decorated for the agent
	plain   tools.Set // builtin with LoadTools and Report: a task without its own tools or MCP
}

// maxCachedToolSets bounds the cache: a task delegated with another model
// has a definition of its own, so a long session could otherwise grow it
// without end. It is emptied when full.
const maxCachedToolSets = 64

func (tc *toolSetCache) get(all tools.Set, def *AgentDefinition, mode messages.Mode) *toolSetEntry {
	k := toolSetKey{def: def, mode: mode}
	tc.mu.Lock()
	e, ok := tc.m[k]
	tc.mu.Unlock()
	if ok && e.from.Same(all) {
		return e
	}
	builtin := agentFilter(all, def, mode)
	e = &toolSetEntry{from: all, builtin: builtin, plain: withLoadAndReport(builtin, def)}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.m == nil || len(tc.m) >= maxCachedToolSets {
		tc.m = map[toolSetKey]*toolSetEntry{}
	}
	tc.m[k] = e
	return e
}

// ListedTools names the tools AgentTools gives def in mode, for people
// (`odin agents`, docs/agents.md): MCP tools are known only once their servers
// connect, so an MCP pattern of the declaration that no tool of all
// matches yet is listed as the pattern (mcp__github__*).
func ListedTools(all tools.Set, r *Roster, def *AgentDefinition, mode messages.Mode) []string {
	var names []string
	for _, n := range AgentTools(all, r, def, mode).Names() {
		switch {
		case n == NameLoadTools:
			// How the tools marked "on demand" are loaded, not one more.
		case slices.Contains(def.OnDemand, n):
			names = append(names, n+" (on demand)")
		default:
			names = append(names, n)
		}
	}
	for _, p := range def.Tools {
		if !isMCPPattern(p) || slices.Contains(def.DisallowedTools, p) {
			continue
		}
		if !slices.ContainsFunc(names, func(n string) bool { return matchesMCP(p, n) }) {
			names = append(names, p)
		}
	}
	return names
}
