package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/termsafe"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools"
	"github.com/odin-code/odin/tools/tool"
)

func newMCPCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "List, inspect, add, remove and log in to MCP servers (mcp.servers, .mcp.json, ~/.claude.json)",
	}
	c.AddCommand(newMCPListCmd(g, stdout), newMCPToolsCmd(g, stdout), newMCPAddCmd(stdout), newMCPRemoveCmd(stdout),
		newMCPLoginCmd(g, stdout), newMCPLogoutCmd(g, stdout))
	return c
}

// connectAll starts every configured server and waits for them, at most
// mcp.connect_timeout: listing is the one place where lazy servers start
// without being called.
func connectAll(a *app) (*mcp.Manager, *actors.Deps, error) {
	deps, err := a.buildDeps(events.New("cli", nil), a.headlessApprover())
	if err != nil {
		return nil, nil, err
	}
	m := a.mcpManager()
	m.StartAll()
	m.WaitSettled(context.Background(), a.cfg.MCP.ConnectTimeout)
	return m, deps, nil
}

func newMCPListCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List MCP servers: status, tools and the agents that may use them",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return withApp(g, func(a *app) error {
				m, deps, err := connectAll(a)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATUS\tTOOLS\tAGENTS")
				byServer := map[string][]tool.Tool{}
				for _, t := range m.Tools() {
					server := strings.SplitN(strings.TrimPrefix(t.Info().Name, mcp.Prefix), "__", 2)[0]
					byServer[server] = append(byServer[server], t)
				}
				for _, st := range m.Status() {
					status := string(st.State)
					if st.State == mcp.StateNeedsLogin {
						status = "needs login: run `odin mcp login " + st.Name + "`"
					} else if st.Err != "" && st.State != mcp.StateReady {
						status += ": " + st.Err
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", st.Name, st.Transport, status, len(st.Tools),
						strings.Join(mcpAgents(deps, byServer[st.Name]), ","))
				}
				for _, k := range a.src.Dropped {
					if name, ok := strings.CutPrefix(k, "mcp.servers."); ok {
						fmt.Fprintf(tw, "%s\t-\tnot started: declared by the project, waiting for `odin trust`\t0\t-\n", name)
					}
				}
				for _, name := range a.trust.refusedServers {
					fmt.Fprintf(tw, "%s\t-\tnot started: the project files it runs changed since `odin trust`\t0\t-\n", name)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				// What the servers said on stderr (their own words: never
				// a control sequence to the terminal).
				for _, st := range m.Status() {
					if len(st.Stderr) == 0 {
						continue
					}
					where := ""
					if st.Log != "" {
						where = ", all of it in " + st.Log
					}
					fmt.Fprintf(stdout, "\n%s stderr (last %d lines%s):\n", st.Name, len(st.Stderr), termsafe.Line(where))
					for _, l := range st.Stderr {
						fmt.Fprintln(stdout, "  "+termsafe.Line(l))
					}
				}
				return nil
			})
		},
	}
}

// mcpAgents names the agents that get at least one of a server's tools in
// edit mode: the Orchestrator and the specialists whose tool lists allow
// them.
func mcpAgents(deps *actors.Deps, ts []tool.Tool) []string {
	if len(ts) == 0 {
		return nil
	}
	set := tools.NewSet(ts...)
	out := []string{"orchestrator"}
	for _, def := range deps.Roster.Agents() {
		if actors.FilterTools(set, def, messages.ModeEdit, true).Len() > 0 {
			out = append(out, def.Name)
		}
	}
	return out
}

func newMCPToolsCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "tools NAME",
		Short: "List the tools of one MCP server as agents see them",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return withApp(g, func(a *app) error {
				if _, ok := a.cfg.MCP.Servers[args[0]]; !ok {
					return usageError("no MCP server named %q (see odin mcp list)", args[0])
				}
				m, _, err := connectAll(a)
				if err != nil {
					return err
				}
				for _, st := range m.Status() {
					if st.Name != args[0] {
						continue
					}
					if st.State != mcp.StateReady {
						return &exitError{code: exitFailed, err: fmt.Errorf("MCP server %s is %s: %s", st.Name, st.State, st.Err)}
					}
				}
				for _, t := range m.Tools() {
					info := t.Info()
					if !strings.HasPrefix(info.Name, mcp.Prefix+args[0]+"__") {
						continue
					}
					ro := ""
					if info.ReadOnly {
						ro = " (read-only)"
					}
					desc, _, _ := strings.Cut(info.Description, "\n")
					fmt.Fprintf(stdout, "%s%s\n    %s\n", info.Name, ro, desc)
				}
				return nil
			})
		},
	}
}

func newMCPAddCmd(stdout io.Writer) *cobra.Command {
	var s config.MCPServer
	var env, headers []string
	c := &cobra.Command{
		Use:   "add NAME [--url URL | -- COMMAND [ARGS...]]",
		Short: "Add an MCP server to your user odin.yaml",
		Example: `  odin mcp add fs -- npx -y @modelcontextprotocol/server-filesystem /tmp
  odin mcp add github --url https://api.githubcopilot.com/mcp/ --bearer-token-env GITHUB_TOKEN`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			if len(args) > 1 {
				s.Command, s.Args = args[1], args[2:]
			}
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usageError("--env %q: want KEY=VALUE", kv)
				}
				if s.Env == nil {
					s.Env = map[string]string{}
				}
				s.Env[k] = v
			}
			for _, kv := range headers {
				k, v, ok := strings.Cut(kv, ":")
				if !ok {
					return usageError("--header %q: want 'Name: value'", kv)
				}
				if s.Headers == nil {
					s.Headers = map[string]string{}
				}
				s.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			dir := config.UserDir(config.EnvFunc(os.LookupEnv))
			if dir == "" {
				return usageError("no user config directory (set HOME or XDG_CONFIG_HOME)")
			}
			path := filepath.Join(dir, config.FileName)
			replaced, err := config.SetMCPServer(path, name, s)
			if err != nil {
				return usageError("%v", err)
			}
			if replaced {
				// Not "added": the entry the user had (its env, headers)
				// is gone, and they should know.
				fmt.Fprintf(stdout, "replaced MCP server %s in %s\n", name, path)
				return nil
			}
			fmt.Fprintf(stdout, "added MCP server %s to %s\n", name, path)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&s.URL, "url", "", "URL of an http (Streamable HTTP) or sse server")
	f.StringVar(&s.Type, "transport", "", "stdio, http or sse (default: from the command or --url)")
	f.StringArrayVar(&env, "env", nil, "KEY=VALUE for a stdio server's environment (repeatable)")
	f.StringArrayVar(&headers, "header", nil, "'Name: value' sent to an http or sse server (repeatable)")
	f.StringVar(&s.BearerTokenEnv, "bearer-token-env", "", "environment variable holding a bearer token")
	f.StringVar(&s.Startup, "startup", "", "lazy (default) or eager")
	return c
}

func newMCPRemoveCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server from your user odin.yaml",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := config.UserDir(config.EnvFunc(os.LookupEnv))
			path := filepath.Join(dir, config.FileName)
			found, err := config.RemoveMCPServer(path, args[0])
			if err != nil {
				return usageError("%v", err)
			}
			if !found {
				return usageError("no MCP server %q in %s (servers of a project's odin.yaml or .mcp.json are edited there)", args[0], path)
			}
			fmt.Fprintf(stdout, "removed MCP server %s from %s\n", args[0], path)
			return nil
		},
	}
}
