package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/termsafe"
)

// mcpAuthDir is the state directory's folder of MCP OAuth credentials.
const mcpAuthDir = "mcp-auth"

func newMCPLoginCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to an http MCP server with OAuth (opens your browser, or prints the URL)",
		Long: `Log in to an http MCP server that asks for OAuth authorization (it answered
401): Odin discovers its authorization server, registers itself (or uses
mcp.servers.NAME.oauth.client_id), opens your browser ($BROWSER if set) on the
authorization page, or prints the URL, and waits for the redirect to a
listener on 127.0.0.1. The token is kept in Odin's state directory (0600) and
refreshed when it expires. See docs/mcp-auth.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			return withApp(g, func(a *app) error {
				cfg, err := a.oauthServer(name)
				if err != nil {
					return err
				}
				// One may log in before enabling the server.
				cfg.Disabled = false
				ctx, stop := context.WithTimeout(cmd.Context(), timeout)
				defer stop()
				var opened atomic.Bool
				open := browserOpener(a.env, stdout)
				m := mcp.New(mcp.Options{
					Servers: map[string]config.MCPServer{name: cfg}, LookupEnv: a.env,
					ServerLookup: a.secretGuard().lookup,
					Auth:         a.mcpAuthStore(),
					Login: &mcp.LoginFlow{Open: func(ctx context.Context, u string) error {
						opened.Store(true)
						return open(ctx, name, u)
					}},
					ConnectTimeout: timeout, MaxRestarts: 1,
					LogLevel: a.cfg.Log.Level, Version: versionString(), Log: a.log,
				})
				defer func() { _ = m.Close() }()
				m.StartAll()
				n, err := m.AwaitReady(ctx, name)
				if err != nil {
					return &exitError{code: exitFailed, err: fmt.Errorf("MCP server %s: login failed: %v", name, err)}
				}
				if !opened.Load() {
					fmt.Fprintf(stdout, "MCP server %s did not ask for authorization: nothing to log in to (%d tools)\n", name, n)
					return nil
				}
				a.forgetMCPTools(name)
				fmt.Fprintf(stdout, "logged in to MCP server %s (%d tools); the token is kept in %s\n", name, n, a.mcpAuthStore().Dir)
				return nil
			})
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the browser")
	return c
}

func newMCPLogoutCmd(g *globalFlags, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the OAuth token of an http MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			name := args[0]
			return withApp(g, func(a *app) error {
				cfg, err := a.oauthServer(name)
				if err != nil {
					return err
				}
				found, err := a.mcpAuthStore().Delete(a.mcpServerURL(name, cfg))
				if err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				a.forgetMCPTools(name)
				if !found {
					fmt.Fprintf(stdout, "MCP server %s: no token stored\n", name)
					return nil
				}
				fmt.Fprintf(stdout, "logged out of MCP server %s\n", name)
				return nil
			})
		},
	}
}

// oauthServer is the configured http server name, or a usage error.
func (a *app) oauthServer(name string) (config.MCPServer, error) {
	cfg, ok := a.cfg.MCP.Servers[name]
	if !ok {
		return cfg, usageError("no MCP server named %q (see odin mcp list)", name)
	}
	if cfg.URL == "" {
		return cfg, usageError("MCP server %s is a stdio server (a command): it has no OAuth login", name)
	}
	return cfg, nil
}

// mcpServerURL is the server's URL as the manager expands it.
func (a *app) mcpServerURL(name string, cfg config.MCPServer) string {
	look := a.env
	if l := a.secretGuard().lookup(name); l != nil {
		look = l
	}
	return mcp.Expand(cfg.URL, look)
}

// forgetMCPTools drops the server's remembered tool list: after a logout
// a lazy server would advertise tools it can no longer call, and after a
// login the list may differ; either way the next session asks it.
func (a *app) forgetMCPTools(name string) {
	if a.stateDir == "" {
		return
	}
	files, _ := filepath.Glob(filepath.Join(a.stateDir, "mcp-tools", name+"-"+strings.Repeat("?", 16)+".json"))
	for _, f := range files {
		_ = os.Remove(f)
	}
}

// browserOpener shows the authorization URL: printed always (the user may
// be on another machine), and handed to $BROWSER (a ':'-separated list of
// commands; "%s" stands for the URL, else it is the last argument) or the
// desktop's opener when there is a display. The user chose these programs
// and the URL is one argument (an http(s) URL, checked by the flow), so
// they run outside the sandbox, like the user's own browser.
func browserOpener(env config.EnvFunc, out io.Writer) func(ctx context.Context, server, u string) error {
	return func(_ context.Context, server, u string) error {
		fmt.Fprintf(out, "To authorize Odin with MCP server %s, open this URL in your browser:\n  %s\n", server, termsafe.Line(u))
		for _, argv := range browserCommands(env) {
			cmd := exec.Command(argv[0], argv[1:]...)
			for i, arg := range cmd.Args {
				if arg == "%s" {
					cmd.Args[i] = u
				}
			}
			if !strings.Contains(strings.Join(argv, " "), "%s") {
				cmd.Args = append(cmd.Args, u)
			}
			if err := cmd.Start(); err != nil {
				continue
			}
			go func() { _ = cmd.Wait() }()
			fmt.Fprintf(out, "(opened with %s; waiting for the browser to come back)\n", filepath.Base(argv[0]))
			return nil
		}
		fmt.Fprintln(out, "(waiting for the browser to come back)")
		return nil
	}
}

// browserCommands are the commands to try, in order.
func browserCommands(env config.EnvFunc) [][]string {
	look := func(k string) string {
		v, _ := env(k)
		return strings.TrimSpace(v)
	}
	var out [][]string
	if b := look("BROWSER"); b != "" {
		for _, c := range strings.Split(b, ":") {
			if f := strings.Fields(c); len(f) > 0 {
				out = append(out, f)
			}
		}
		return out
	}
	switch {
	case runtime.GOOS == "darwin":
		out = append(out, []string{"open"})
	case look("DISPLAY") != "" || look("WAYLAND_DISPLAY") != "":
		out = append(out, []string{"xdg-open"})
	}
	return out
}
