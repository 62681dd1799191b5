package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/plugin"
)

// usePlugins takes the enabled plugins' parts into the app: hooks and MCP
// servers into the configuration (a project's only once it is trusted),
// and says once what a plugin brings that Odin cannot use. Agents and
// commands are read from their directories by agentDirs and
// pluginCommandDirs.
func (a *app) usePlugins(all []*plugin.Plugin) {
	for _, p := range all {
		if p.Disabled {
			continue
		}
		a.plugins = append(a.plugins, p)
		a.unsupportedNotice(p)
		if p.Project && !a.trust.trusted {
			continue // the untrusted notice lists its hooks and servers
		}
		if a.cfg.Hooks == nil {
			a.cfg.Hooks = map[string][]config.Hook{}
		}
		for _, ev := range sortedKeys(p.Hooks) {
			a.cfg.Hooks[ev] = append(a.cfg.Hooks[ev], p.Hooks[ev]...)
		}
		if a.cfg.MCP.Servers == nil {
			a.cfg.MCP.Servers = map[string]config.MCPServer{}
		}
		for _, name := range sortedKeys(p.MCPServers) {
			if _, ok := a.cfg.MCP.Servers[name]; ok {
				a.warn(fmt.Sprintf("plugin %s: MCP server %s is also configured elsewhere, which is used", p.Name, name))
				continue
			}
			a.cfg.MCP.Servers[name] = p.MCPServers[name]
		}
	}
}

// unsupportedNotice warns, once per plugin and content (remembered in the
// state dir), of what the plugin brings that Odin cannot use; `odin plugin
// list` always shows it.
func (a *app) unsupportedNotice(p *plugin.Plugin) {
	if len(p.Unsupported) == 0 {
		return
	}
	text := fmt.Sprintf("plugin %s: Odin cannot use: %s (see `odin plugin list`)", p.Name, strings.Join(p.Unsupported, "; "))
	if a.stateDir == "" {
		a.warn(text)
		return
	}
	mark := filepath.Join(a.stateDir, "plugin-notices", p.Name)
	if old, err := os.ReadFile(mark); err == nil && string(old) == text {
		return
	}
	a.pluginNotes = append(a.pluginNotes, pluginNote{mark: mark, text: text})
}

// pluginNote is a notice of what a plugin brings that Odin cannot use,
// remembered as given (in mark) only once it is shown.
type pluginNote struct {
	mark, text string
}

// takePluginNotes returns the pending plugin notices and remembers them as
// given, so the next session does not repeat them.
func (a *app) takePluginNotes() []string {
	var out []string
	for _, n := range a.pluginNotes {
		out = append(out, n.text)
		if err := os.MkdirAll(filepath.Dir(n.mark), 0o700); err == nil {
			_ = fsutil.WriteFileAtomic(n.mark, []byte(n.text), 0o600)
		}
	}
	a.pluginNotes = nil
	return out
}

// agentDirs are the agent directories of the session: the project's, then
// the enabled plugins'.
func (a *app) agentDirs() []string {
	dirs := agentDirs(a.root)
	for _, p := range a.plugins {
		dirs = append(dirs, p.AgentDirs...)
	}
	return dirs
}

// pluginCommandDirs are the enabled plugins' command directories.
func (a *app) pluginCommandDirs() []string {
	var dirs []string
	for _, p := range a.plugins {
		dirs = append(dirs, p.CommandDirs...)
	}
	return dirs
}

// projectPluginDirs are the agent (or command) directories of the
// project's enabled plugins, which follow the trust rules of the
// project's own agent and command files.
func projectPluginDirs(plugins []*plugin.Plugin, commands bool) []string {
	var dirs []string
	for _, p := range plugins {
		if !p.Project || p.Disabled {
			continue
		}
		if commands {
			dirs = append(dirs, p.CommandDirs...)
		} else {
			dirs = append(dirs, p.AgentDirs...)
		}
	}
	return dirs
}

// pluginTrustItems are the hooks and MCP servers of the project's enabled
// plugins: they run code, so they wait for `odin trust` like the project's
// own hooks and servers.
func pluginTrustItems(root string, plugins []*plugin.Plugin) []config.TrustItem {
	var items []config.TrustItem
	for _, p := range plugins {
		if !p.Project || p.Disabled {
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			rel = p.Dir
		}
		for _, ev := range sortedKeys(p.Hooks) {
			for _, h := range p.Hooks[ev] {
				v := h.Command
				if h.Matcher != "" {
					v = h.Matcher + ": " + v
				}
				items = append(items, config.TrustItem{Key: rel + " hooks." + ev, Value: v, Note: "plugin " + p.Name})
			}
		}
		for _, name := range sortedKeys(p.MCPServers) {
			s := p.MCPServers[name]
			v := s.URL
			if s.Command != "" {
				v = strings.Join(append([]string{s.Command}, s.Args...), " ")
			}
			items = append(items, config.TrustItem{Key: rel + " mcpServers." + name, Value: v, Note: "plugin " + p.Name})
		}
	}
	return items
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func newPluginCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Manage plugins in Claude Code's format (agents, commands, hooks, MCP servers)",
		Long: "A plugin is a folder with .claude-plugin/plugin.json and any of agents/, commands/, hooks/hooks.json and .mcp.json, " +
			"as Claude Code's plugins are. Installed plugins live in the user's data dir ($XDG_DATA_HOME/odin/plugins); " +
			"a project's plugins (.odin/plugins/NAME, .claude/plugins/NAME) run their hooks and servers only once the project is trusted (`odin trust`).",
	}
	dataDir := func() string { return config.DataDir(os.LookupEnv) }
	cmd.AddCommand(
		&cobra.Command{
			Use:   "add PATH|GIT-URL",
			Short: "Install a plugin from a folder or a git repository (nothing from it runs while installing)",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				p, notes, err := plugin.Install(context.Background(), dataDir(), args[0])
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				fmt.Fprintf(stdout, "installed %s %s in %s\n", p.Name, p.Version, p.Dir)
				describePlugin(stdout, p)
				for _, n := range notes {
					fmt.Fprintln(stdout, "  note:", config.Printable(n))
				}
				return nil
			},
		},
		&cobra.Command{
			Use:   "list",
			Short: "List the installed and the project's plugins, what they add and what Odin cannot use",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				return withApp(g, func(a *app) error {
					all, problems := plugin.Discover(a.dataDir, plugin.ProjectDirs(a.root))
					tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tVERSION\tSTATUS\tSOURCE\tAGENTS\tCOMMANDS\tHOOKS\tMCP")
					for _, p := range all {
						status, source := "enabled", "user"
						if p.Project {
							source = "project"
							if !a.trust.trusted {
								status = "enabled (hooks and MCP wait for `odin trust`)"
							}
						}
						if p.Disabled {
							status = "disabled"
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", p.Name, orDash(p.Version), status, source,
							len(p.Agents), len(p.Commands), p.HookCount(), orDash(strings.Join(sortedKeys(p.MCPServers), ",")))
					}
					if err := tw.Flush(); err != nil {
						return err
					}
					for _, p := range all {
						for _, u := range p.Unsupported {
							fmt.Fprintf(stdout, "%s: cannot use: %s\n", p.Name, config.Printable(u))
						}
					}
					for _, pr := range problems {
						fmt.Fprintln(stdout, "warning:", config.Printable(pr))
					}
					if len(all) == 0 {
						fmt.Fprintln(stdout, "no plugins; add one with `odin plugin add PATH|GIT-URL`")
					}
					return nil
				})
			},
		},
		&cobra.Command{
			Use:   "remove NAME",
			Short: "Uninstall a plugin",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if err := plugin.Remove(dataDir(), args[0]); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				fmt.Fprintf(stdout, "removed %s\n", args[0])
				return nil
			},
		},
		enableCmd(g, stdout, true), enableCmd(g, stdout, false),
	)
	return cmd
}

func enableCmd(g *globalFlags, stdout io.Writer, enable bool) *cobra.Command {
	verb := "disable"
	if enable {
		verb = "enable"
	}
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " an installed or a project's plugin",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return withApp(g, func(a *app) error {
				all, _ := plugin.Discover(a.dataDir, plugin.ProjectDirs(a.root))
				if !slices.ContainsFunc(all, func(p *plugin.Plugin) bool { return p.Name == args[0] }) {
					return &exitError{code: exitFailed, err: fmt.Errorf("no plugin named %s (see `odin plugin list`)", args[0])}
				}
				if err := plugin.SetEnabled(a.dataDir, args[0], enable); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				fmt.Fprintf(stdout, "%sd %s\n", verb, args[0])
				return nil
			})
		},
	}
}

// describePlugin says what a plugin adds and what Odin cannot use.
func describePlugin(w io.Writer, p *plugin.Plugin) {
	if len(p.Agents) > 0 {
		fmt.Fprintf(w, "  agents: %s\n", strings.Join(p.Agents, ", "))
	}
	if len(p.Commands) > 0 {
		fmt.Fprintf(w, "  commands: /%s\n", strings.Join(p.Commands, ", /"))
	}
	for _, ev := range sortedKeys(p.Hooks) {
		for _, h := range p.Hooks[ev] {
			m := h.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(w, "  hook %s (%s): %s\n", ev, m, config.Printable(h.Command))
		}
	}
	if len(p.MCPServers) > 0 {
		fmt.Fprintf(w, "  MCP servers: %s\n", strings.Join(sortedKeys(p.MCPServers), ", "))
	}
	for _, u := range p.Unsupported {
		fmt.Fprintf(w, "  cannot use: %s\n", config.Printable(u))
	}
}

// pluginDirs are the enabled plugins' roots: their hooks and MCP servers
// run scripts from there, which the sandbox must keep readable.
func (a *app) pluginDirs() []string {
	var dirs []string
	for _, p := range a.plugins {
		dirs = append(dirs, p.Dir)
	}
	return dirs
}
