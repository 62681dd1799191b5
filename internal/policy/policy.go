package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/policy/approve"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Options configure a session's Policy.
type Options struct {
	// Root is the project root (absolute; must exist).
	Root string
	// Permissions are the effective permissions: the trusted config plus
	// the flags (--allow adds to AllowedCommands, --add-dir to
	// AdditionalDirs).
	Permissions config.Permissions
	// Protected are paths never written: Odin's user config dir and state
	// dir.
	Protected []string
	// Approver answers what needs approval: a *BusApprover in the REPL,
	// Headless{} (or Headless{Yolo: true}) in headless runs. Nil means
	// Headless{}. It is wrapped in the session's Memory.
	Approver Approver
	// TestFiles are further globs the Test agent may write
	// (quality.test_files).
	TestFiles []string
}

// Policy is one session's permission policy: the path guard, the command
// policy and the session's approval memory. It implements tool.Permission
// and is safe for concurrent use; every agent of the session shares it, so
// a specialist never gets more than its session has.
type Policy struct {
	guard    *Guard
	commands *Commands
	memory   *Memory
	// mcpAllow are the allowed_commands (and --allow) patterns that name
	// MCP tools (mcp__...): glob patterns over tool names.
	mcpAllow []string
}

var _ tool.Permission = (*Policy)(nil)

// New builds a session's Policy.
func New(opts Options) (*Policy, error) {
	mem := NewMemory(opts.Approver)
	g, err := NewGuard(opts.Root, GuardOptions{
		AdditionalDirs: opts.Permissions.AdditionalDirs,
		Protected:      opts.Protected,
		Approver:       mem,
		TestFiles:      opts.TestFiles,
	})
	if err != nil {
		return nil, err
	}
	c, err := NewCommands(g, opts.Permissions)
	if err != nil {
		return nil, err
	}
	var mcpAllow []string
	for _, p := range opts.Permissions.AllowedCommands {
		if strings.HasPrefix(p, mcpPrefix) {
			mcpAllow = append(mcpAllow, p)
		}
	}
	return &Policy{guard: g, commands: c, memory: mem, mcpAllow: mcpAllow}, nil
}

// Guard is the session's path guard (the Orchestrator's).
func (p *Policy) Guard() *Guard { return p.guard }

// GuardFor returns the path guard for an agent instance, to put in its
// tool.Env: the session's guard plus the agent's write filter.
func (p *Policy) GuardFor(agent, taskID string) *Guard { return p.guard.ForAgent(agent, taskID) }

// Memory is the session's approval memory.
func (p *Policy) Memory() *Memory { return p.memory }

// CheckCommand classifies command for env's agent and mode without asking.
func (p *Policy) CheckCommand(env *tool.Env, command string) Verdict {
	return p.commands.WithGuard(p.GuardFor(env.Agent, env.AgentID)).Check(command, modeOf(env))
}

// Authorize implements tool.Permission. It enforces the mode by tool class
// (ask and plan modes write nothing but plan files under .odin/plans/, and
// run only read-only commands), classifies ExecuteCommand's command, and
// asks the session's approver when the verdict is Ask. It returns nil to
// allow, a *Denial to refuse, or the approver's error (a cancelled
// context). Paths of read and write tools are checked by the Guard inside
// the tool, where the resolved path is used.
func (p *Policy) Authorize(ctx context.Context, env *tool.Env, info tool.Info, input json.RawMessage) error {
	mode := modeOf(env)
	switch info.Class {
	case tool.ClassRead, tool.ClassWeb, tool.ClassSpawn:
		return nil
	case tool.ClassWrite:
		if mode == messages.ModeEdit {
			// The tool's guard checks the path again and asks when it must;
			// refusing here already spares hooks and the tool a call that
			// can never succeed (protected path, agent write filter).
			if path := stringField(input, "file_path"); path != "" {
				if resolved, v, err := p.GuardFor(env.Agent, env.AgentID).Check(path, tool.AccessWrite); err == nil && v.Action == Deny {
					return approve.DenialOf(v, resolved, info.Name)
				}
			}
			return nil
		}
		if mode == messages.ModePlan {
			if path := stringField(input, "file_path"); path != "" && p.isPlanFile(env, path) {
				return nil
			}
		}
		return &Denial{Rule: RuleMode, Subject: info.Name, Message: fmt.Sprintf(
			"Permission denied: %s changes files, and %s mode changes nothing (rule %s). Only plan mode may write, and only its plan file under .odin/plans/. Describe the change instead; only the user can switch to edit mode.",
			info.Name, mode, RuleMode)}
	case tool.ClassExecute:
		command := stringField(input, "command")
		if code := stringField(input, "code"); strings.TrimSpace(command) == "" && strings.TrimSpace(code) != "" {
			return p.authorizeSnippet(ctx, env, info, code, mode)
		}
		if strings.TrimSpace(command) == "" {
			if json.Valid(input) {
				// Nothing would run: let the tool's own validation say
				// what is wrong with the input.
				return nil
			}
			return &Denial{Rule: RuleUnresolvable, Subject: info.Name, Message: fmt.Sprintf(
				"Permission denied: %s needs a non-empty \"command\" string to be checked.", info.Name)}
		}
		g := p.GuardFor(env.Agent, env.AgentID)
		// A persistent shell is checked in the directory it is in.
		v := p.commands.WithGuard(g).CheckIn(command, tool.WorkDir(ctx), mode)
		switch v.Action {
		case Allow:
			return nil
		case Deny:
			return approve.DenialOf(v, command, info.Name)
		}
		return approve.RequestApproval(ctx, p.memory, Request{
			Kind:    KindCommand,
			Tool:    info.Name,
			Subject: command,
			Origin:  g.origin,
		}, v)
	case tool.ClassMCP:
		return p.authorizeMCP(ctx, env, info, input)
	}
	return &Denial{Rule: RuleMode, Subject: info.Name, Message: fmt.Sprintf("Permission denied: %s has an unknown tool class %q.", info.Name, info.Class)}
}

// authorizeSnippet decides a code snippet of an execute-class tool (the
// Python tool's "code"): its effects cannot be checked statically, so it
// is decided as running `python3` itself would be — refused in ask and
// plan mode, asked in edit mode unless permissions.allowed_commands allow
// python3 — with the snippet shown to the user.
func (p *Policy) authorizeSnippet(ctx context.Context, env *tool.Env, info tool.Info, code string, mode messages.Mode) error {
	g := p.GuardFor(env.Agent, env.AgentID)
	v := p.commands.WithGuard(g).Check("python3", mode)
	switch v.Action {
	case Allow:
		return nil
	case Deny:
		return approve.DenialOf(v, "python3 (snippet)", info.Name)
	}
	return approve.RequestApproval(ctx, p.memory, Request{
		Kind:    KindCommand,
		Tool:    info.Name,
		Subject: "python3 <<'EOF'\n" + code + "\nEOF",
		Origin:  g.origin,
	}, v)
}

// mcpPrefix starts MCP tool names and the patterns that allow them.
const mcpPrefix = "mcp__"

// authorizeMCP decides an MCP tool call: what an MCP server does is
// unknown to Odin, so every call asks unless a pattern allows the tool's
// name (--allow 'mcp__github__get_*', permissions.allowed_commands).
// Headless runs therefore refuse it with the advice to --allow.
func (p *Policy) authorizeMCP(ctx context.Context, env *tool.Env, info tool.Info, input json.RawMessage) error {
	for _, pat := range p.mcpAllow {
		if ok, err := path.Match(pat, info.Name); err == nil && ok {
			return nil
		}
	}
	origin := p.GuardFor(env.Agent, env.AgentID).origin
	// The user sees the arguments; approving for the session covers the
	// tool whatever its arguments.
	subject := info.Name
	if args := strings.TrimSpace(string(input)); args != "" && args != "{}" {
		subject += " " + args
	}
	return approve.RequestApproval(ctx, p.memory, Request{Kind: KindMCP, Tool: info.Name, Subject: subject, Origin: origin},
		Verdict{Findings: []Finding{{Action: Ask, Rule: RuleMCP, Subject: info.Name, Key: "mcp:" + info.Name,
			Reason: "it calls a tool of an MCP server, whose effects Odin cannot check"}}})
}

// isPlanFile reports whether path resolves to a file under .odin/plans/.
func (p *Policy) isPlanFile(env *tool.Env, path string) bool {
	resolved, v, err := p.GuardFor(env.Agent, env.AgentID).Check(path, tool.AccessWrite)
	if err != nil || v.Action != Allow {
		return false
	}
	plans := filepath.Join(p.guard.root, ".odin", "plans")
	return resolved != plans && workspace.Within(plans, resolved)
}

// modeOf reads env's mode; anything unknown counts as ask mode, the most
// restrictive.
func modeOf(env *tool.Env) messages.Mode {
	if env == nil {
		return messages.ModeAsk
	}
	m, err := messages.ParseMode(env.Mode)
	if err != nil {
		return messages.ModeAsk
	}
	return m
}

// stringField decodes one string field of a JSON object ("" when absent or
// not a string). Decoding here, rather than with the tool's input type,
// keeps the policy independent of the tools' packages.
func stringField(input json.RawMessage, name string) string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(m[name], &s); err != nil {
		return ""
	}
	return s
}
