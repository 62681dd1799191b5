package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/messages"
)

func newAgentsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List and validate the specialist roster (built-in, odin.yaml, .odin/agents/*.md)",
		Long: `List and validate the specialist roster: the built-in agents, odin.yaml's
agents:, .odin/agents/*.md and .claude/agents/*.md (Claude Code's agent files
work as they are), enabled plugins' agents, and your own agent files in
~/.config/odin/agents and ~/.claude/agents (a project's agent of the same name
shadows them). TOOLS is what the agent's model is offered in an edit turn,
computed as for the model request: MCP tools by their pattern until a server
connects.

Definition fields (odin.yaml or front matter): description, prompt, tools,
disallowed_tools (MCP patterns such as mcp__github__* included), model, timeout,
max_turns, max_tokens, role (reviewer, tester, fixer, diagnostician,
researcher: the gates find agents by role), report (the Report schema),
permission_mode (ask, plan or edit: a cap on what the agent may do),
critical_reminder (ends every request of the agent), color (the REPL's), skills
(SKILL.md folders offered through the Skill tool) and sandbox (network: off,
allowed_domains). A bad value is an error naming the file and the key.

Lifecycle: the Orchestrator delegates through one tool, agent (an enum of this
roster), with a prompt and optionally run_in_background (the run's handle comes
back at once; agent_output waits for or peeks at its report, agent_stop stops or
detaches it), resume (a finished run continues with its stored transcript),
thoroughness (quick, medium, very thorough), context (brief, scoped: named files
and a summary of the conversation, fork: the conversation with tool output
trimmed), model (main, small or a configured model id), max_turns and only_files (the only files it may write). The
REPL's /agents and odin sessions show list every run of a session with its
status, tokens and last activities.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				deps, err := a.buildDeps(events.New("cli", nil), a.headlessApprover())
				if err != nil {
					return err
				}
				// What an edit-mode delegation offers the agent's model,
				// computed as the request builder does; the MCP tools are
				// those of servers connected (or cached) now.
				all := deps.Tools
				if deps.MCP != nil {
					all = all.With(deps.MCP()...)
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTIMEOUT\tASK/PLAN\tROLE\tREPORT\tMODE CAP\tCOLOR\tTOOLS")
				for _, def := range deps.Roster.Agents() {
					model := def.Model
					if m, err := a.cfg.ResolveModel(def.Model); err == nil && m.ID != def.Model {
						model += " (" + m.ID + ")"
					}
					ro := "no"
					if actors.ReadOnlyAgent(deps.Tools, def) {
						ro = "yes"
					}
					names := actors.ListedTools(all, deps.Roster, def, messages.ModeEdit)
					source := def.Source
					if home, ok := a.env("HOME"); ok && home != "" && strings.HasPrefix(source, home+string(filepath.Separator)) {
						// A user-level agent file: ~/.claude/agents/x.md.
						source = "~" + strings.TrimPrefix(source, home)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\n", def.Name, source, model, def.Timeout, def.MaxTimeout, ro,
						orDash(string(def.Role)), orDash(def.Report), orDash(string(def.PermissionMode)), orDash(def.Color), strings.Join(names, ","))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "\n%d agents, roster valid.\n", len(deps.Roster.Agents()))
				details(stdout, deps.Roster.Agents())
				if sk := deps.Roster.Skills(); len(sk) > 0 {
					fmt.Fprintf(stdout, "\nskills:\n")
					for _, s := range sk {
						fmt.Fprintf(stdout, "  %s: %s (%s)\n", s.Name, config.Printable(s.Description), config.Printable(s.Path))
					}
				}
				for _, w := range deps.Roster.Warnings() {
					fmt.Fprintln(stdout, "warning:", config.Printable(w))
				}
				return nil
			})
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// details lists the definition fields that do not fit the table: the
// critical reminder, the skills and the sandbox profile.
func details(w io.Writer, defs []*actors.AgentDefinition) {
	for _, def := range defs {
		var lines []string
		if def.CriticalReminder != "" {
			lines = append(lines, "critical_reminder: "+config.Printable(firstLineOf(def.CriticalReminder)))
		}
		if len(def.Skills) > 0 {
			lines = append(lines, "skills: "+strings.Join(def.Skills, ", "))
		}
		if def.Sandbox.Network != "" || len(def.Sandbox.AllowedDomains) > 0 {
			net := def.Sandbox.Network
			if net == "" {
				net = "on"
			}
			sb := "sandbox: network " + net
			if len(def.Sandbox.AllowedDomains) > 0 {
				sb += ", also " + strings.Join(def.Sandbox.AllowedDomains, ", ")
			}
			lines = append(lines, sb)
		}
		if len(def.Sandbox.AllowUnixSockets) > 0 {
			lines = append(lines, "sandbox: unix sockets "+config.Printable(strings.Join(def.Sandbox.AllowUnixSockets, ", ")))
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", def.Name)
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

func firstLineOf(s string) string {
	line, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if rest != "" {
		line += " ..."
	}
	return line
}
