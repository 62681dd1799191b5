package actors

import (
	"path"
	"slices"
	"strings"

	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

// FilterTools applies seed 001's layered filtering to the tools an agent
// may see: system exclusions (specialists never delegate: no spawn-class
// tool; the Orchestrator, def nil, goes without orchestratorOmits) → the
// agent's deny list → its allow list ("*" = all) → the mode of
// the message (ask and plan drop write-class tools). A model never sees a
// tool it may not use. An agent with CommandPatterns gets an
// ExecuteCommand that runs only those commands (restrictCommands).
func FilterTools(all tools.Set, def *AgentDefinition, mode messages.Mode, specialist bool) tools.Set {
	set := filterTools(all, def, mode, specialist)
	if def != nil && len(def.CommandPatterns) > 0 {
		set = set.Map(restrictCommands(def.CommandPatterns))
	}
	return set
}

func filterTools(all tools.Set, def *AgentDefinition, mode messages.Mode, specialist bool) tools.Set {
	return all.Filter(func(info tool.Info) bool {
		if specialist && info.Class == tool.ClassSpawn {
			return false
		}
		if info.Class == tool.ClassMCP {
			return mcpAllowed(info, def, mode)
		}
		if def == nil && !specialist && slices.Contains(orchestratorOmits, info.Name) {
			return false
		}
		if slices.Contains(optIn, info.Name) && (def == nil || !slices.Contains(def.Tools, info.Name) || slices.Contains(def.DisallowedTools, info.Name)) {
			return false
		}
		if def != nil {
			if slices.Contains(def.DisallowedTools, info.Name) {
				return false
			}
			if !slices.Contains(def.Tools, "*") && !slices.Contains(def.Tools, info.Name) {
				return false
			}
		}
		if slices.Contains(statefulTools, info.Name) && (mode.ReadOnly() || def != nil && len(def.CommandPatterns) > 0) {
			return false
		}
		return modeAllows(mode, info.Class)
	})
}

// statefulTools keep a process for the run that can always write inside
// its sandbox: read-only modes do not offer them (ExecuteCommand, checked
// line by line, serves there), nor do agents held to command patterns,
// which a persistent shell or an interpreter would get around.
var statefulTools = []string{tools.NameShellSession, tools.NamePython}

// orchestratorOmits are the built-in tools the Orchestrator's model is not
// offered: every request of a session pays for their definitions, and the
// Orchestrator has another way to the same answer. Tree overlaps LS and
// Glob; the specialists that explore keep it (see Builtins). ShellSession
// and Python are the specialists' (their run is a task; the Orchestrator
// has ExecuteCommand). RepoMap is offered although the session's first
// message carries a map (firstTurnMap): every specialist has it among its
// leading tools, and with it the Orchestrator's first request fills the
// provider's cache with the prefix the specialists' first requests share
// (the demo: ~1k uncached tokens less for ~0.6k more in all).
var orchestratorOmits = []string{tools.NameTree, tools.NameShellSession, tools.NamePython}

// optIn are the built-in tools an agent gets only when its tools list
// names them ("*" does not cover them; the Orchestrator goes without):
// WebBrowser starts a Chromium per run.
var optIn = []string{tools.NameWebBrowser}

// mcpAll is the allow-list entry giving an agent every MCP tool.
const mcpAll = "mcp__*"

// isMCPPattern reports whether a tools entry names MCP tools: a tool name
// (mcp__github__get_issue), a glob (mcp__github__get_*) or, as in Claude
// Code, a whole server (mcp__github).
func isMCPPattern(p string) bool { return strings.HasPrefix(p, "mcp__") }

// matchesMCP reports whether a tools entry covers the MCP tool name. "*"
// does not: MCP tools are given by name or pattern.
func matchesMCP(pattern, name string) bool {
	if !isMCPPattern(pattern) {
		return false
	}
	if ok, err := path.Match(pattern, name); err == nil && ok {
		return true
	}
	// A bare server name (mcp__github) covers its tools.
	return !strings.Contains(strings.TrimPrefix(pattern, "mcp__"), "__") && strings.HasPrefix(name, pattern+"__")
}

// mcpAllowed is the filter of MCP tools. The Orchestrator (def nil) gets
// them all; a specialist only those its allow list names by pattern (the
// built-in Research agent has mcp__*) and its deny list does not. Read-only
// modes keep only the tools their server marks read-only.
func mcpAllowed(info tool.Info, def *AgentDefinition, mode messages.Mode) bool {
	if mode.ReadOnly() && !info.ReadOnly {
		return false
	}
	if def == nil {
		return true
	}
	match := func(list []string) bool {
		return slices.ContainsFunc(list, func(p string) bool { return matchesMCP(p, info.Name) })
	}
	return !match(def.DisallowedTools) && match(def.Tools)
}

// modeAllows is the mode layer: ask and plan are read-only. Commands stay
// available because the command policy lets those modes run only
// read-only commands.
func modeAllows(mode messages.Mode, c tool.Class) bool {
	if mode.ReadOnly() {
		return c != tool.ClassWrite
	}
	return true
}

// ReadOnlyAgent reports whether an agent, given the built-in tools, can
// change nothing: every tool it would get is read or web class. Only such
// agents may be started in ask and plan modes.
func ReadOnlyAgent(all tools.Set, def *AgentDefinition) bool {
	if EffectiveMode(def, messages.ModeEdit).ReadOnly() {
		// Capped at ask or plan: no write tool, read-only commands only.
		return true
	}
	for _, t := range FilterTools(all, def, EffectiveMode(def, messages.ModeEdit), true).All() {
		switch t.Info().Class {
		case tool.ClassRead, tool.ClassWeb:
		default:
			return false
		}
	}
	return true
}

// AvailableAgents lists the specialists the Orchestrator may delegate to in
// mode.
func AvailableAgents(all tools.Set, r *Roster, mode messages.Mode) []*AgentDefinition {
	var out []*AgentDefinition
	for _, a := range r.Agents() {
		if mode.ReadOnly() && !ReadOnlyAgent(all, a) {
			continue
		}
		out = append(out, a)
	}
	return out
}
