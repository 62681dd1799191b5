package main

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/mcp"
	"github.com/odin-code/odin/internal/plugin"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/sandbox"
)

// pinnedEntry is one project entry that runs a program (an MCP server or a
// hook from the project's odin.yaml, .mcp.json or plugins): `odin trust`
// pins the project files it executes, and the entry runs only while they
// are unchanged.
type pinnedEntry struct {
	// id names the entry in messages and in the trust record.
	id     string
	server string // the MCP server's name; "" for a hook
	event  string // the hook's event
	hook   config.Hook
	prog   policy.Program
	pins   policy.Pins // as the files are now
	err    error       // PinProgram's: the entry cannot be pinned
}

func serverEntryID(name string) string { return "MCP server '" + name + "'" }

func hookEntryID(event, command, pluginName string) string {
	id := "hook " + event + " `" + config.Printable(command) + "`"
	if pluginName != "" {
		id = "plugin " + pluginName + ": " + id
	}
	return id
}

// isProjectLabel reports whether a config origin is the project's own
// file (odin.yaml or .mcp.json).
func isProjectLabel(label string) bool {
	return label == config.FileName || label == config.ClaudeProjectFile
}

// serverIsProject reports whether the project had a hand in MCP server
// name: any of its keys set by the project's odin.yaml or .mcp.json, or
// the server of a project plugin. An editor's server (odin acp) and one
// wholly from the user's own files are the user's.
func serverIsProject(name string, src *config.Sources, plugins []*plugin.Plugin, editor map[string]bool) bool {
	if editor[name] {
		return false
	}
	if o := src.Origin("mcp.servers." + name); o != "" {
		return isProjectLabel(o)
	}
	for _, p := range plugins {
		if _, ok := p.MCPServers[name]; ok && !p.Disabled {
			return p.Project
		}
	}
	return false
}

// hookPlugin returns the plugin a hook comes from (nil: a config hook).
func hookPlugin(hk config.Hook, plugins []*plugin.Plugin) *plugin.Plugin {
	if hk.PluginRoot == "" {
		return nil
	}
	for _, p := range plugins {
		if p.Dir == hk.PluginRoot {
			return p
		}
	}
	return nil
}

// hookIsProject reports whether a hook of event is the project's: from its
// odin.yaml (hook lists replace, so the list's origin is the hook's) or
// from a project plugin.
func hookIsProject(event string, hk config.Hook, src *config.Sources, plugins []*plugin.Plugin) bool {
	if hk.PluginRoot != "" {
		p := hookPlugin(hk, plugins)
		return p == nil || p.Project
	}
	return isProjectLabel(src.Origin("hooks." + event))
}

// hookProgram is what a hook runs, with the variables its words may use.
func hookProgram(root string, hk config.Hook) policy.Program {
	env := map[string]string{"ODIN_PROJECT_DIR": root, "CLAUDE_PROJECT_DIR": root}
	if hk.PluginRoot != "" {
		env["CLAUDE_PLUGIN_ROOT"] = hk.PluginRoot
	}
	return policy.Program{Shell: hk.Command, Dir: root, Env: env}
}

// serverArgv is a stdio server's command line as the MCP manager expands
// it with look.
func serverArgv(s config.MCPServer, look func(string) (string, bool)) []string {
	argv := []string{mcp.Expand(s.Command, look)}
	for _, a := range s.Args {
		argv = append(argv, mcp.Expand(a, look))
	}
	return argv
}

// projectEntries lists the project's entries that run a program, as cfg
// (the configuration with the project's settings, trusted or not) and the
// project's plugins declare them, with their files pinned as they are now.
func projectEntries(root string, cfg *config.Config, src *config.Sources, plugins []*plugin.Plugin, guard *secretGuard) []pinnedEntry {
	var out []pinnedEntry
	add := func(e pinnedEntry) {
		e.pins, e.err = policy.PinProgram(root, e.prog)
		out = append(out, e)
	}
	for _, name := range sortedKeys(cfg.MCP.Servers) {
		s := cfg.MCP.Servers[name]
		if s.Disabled || s.Command == "" || !serverIsProject(name, src, plugins, nil) {
			continue
		}
		add(pinnedEntry{id: serverEntryID(name), server: name,
			prog: policy.Program{Argv: serverArgv(s, guard.lookup(name)), Dir: root}})
	}
	for _, ev := range sortedKeys(cfg.Hooks) {
		for _, hk := range cfg.Hooks[ev] {
			if hk.PluginRoot == "" && isProjectLabel(src.Origin("hooks."+ev)) {
				add(pinnedEntry{id: hookEntryID(ev, hk.Command, ""), event: ev, hook: hk, prog: hookProgram(root, hk)})
			}
		}
	}
	for _, p := range plugins {
		if !p.Project || p.Disabled {
			continue
		}
		for _, ev := range sortedKeys(p.Hooks) {
			for _, hk := range p.Hooks[ev] {
				add(pinnedEntry{id: hookEntryID(ev, hk.Command, p.Name), event: ev, hook: hk, prog: hookProgram(root, hk)})
			}
		}
		for _, name := range sortedKeys(p.MCPServers) {
			s := p.MCPServers[name]
			if _, configured := cfg.MCP.Servers[name]; configured || s.Disabled || s.Command == "" {
				continue // the configured server of that name is used
			}
			add(pinnedEntry{id: serverEntryID(name), server: name,
				prog: policy.Program{Argv: serverArgv(s, guard.lookup(name)), Dir: root}})
		}
	}
	return out
}

// entryPins are the pins `odin trust` records, by entry.
func entryPins(entries []pinnedEntry) map[string]policy.Pins {
	out := map[string]policy.Pins{}
	for _, e := range entries {
		if e.err == nil {
			out[e.id] = e.pins
		}
	}
	return out
}

// pinRefusal says why an entry must not run with the pins now: its files
// changed since `odin trust`, it cannot be pinned, or the trust record
// predates pinning; "" when it may run.
func pinRefusal(id string, now policy.Pins, pinErr error, stored map[string]policy.Pins, pinned bool) string {
	if pinErr != nil {
		return fmt.Sprintf("%s: %v, so it does not run", id, pinErr)
	}
	if !pinned {
		if len(now) == 0 || len(policy.Pins{}.Changes(now)) == 0 {
			return ""
		}
		return fmt.Sprintf("%s runs project files (%s) that were not pinned when you trusted this project, so it does not run — run `odin trust` again",
			id, strings.Join(now.Files(), ", "))
	}
	changes := stored[id].Changes(now)
	if len(changes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s since `odin trust`, so it does not run — run `odin trust` again", id, strings.Join(changes, ", "))
}

// enforcePins drops from the configuration every project entry whose
// files changed since `odin trust` (or were never pinned), saying so; the
// other entries keep working. Called once the project is trusted and the
// plugins' parts are in.
func (a *app) enforcePins() {
	if !a.trust.trusted {
		return
	}
	for _, e := range a.trust.entries {
		msg := pinRefusal(e.id, e.pins, e.err, a.trust.stored, a.trust.pinned)
		if msg == "" {
			continue
		}
		a.warn(msg)
		if e.server != "" {
			servers := maps.Clone(a.cfg.MCP.Servers)
			delete(servers, e.server)
			a.cfg.MCP.Servers = servers
			a.trust.refusedServers = append(a.trust.refusedServers, e.server)
			continue
		}
		hooks := maps.Clone(a.cfg.Hooks)
		hooks[e.event] = slices.DeleteFunc(slices.Clone(hooks[e.event]), func(h config.Hook) bool {
			return h.Command == e.hook.Command && h.PluginRoot == e.hook.PluginRoot
		})
		a.cfg.Hooks = hooks
	}
}

// checkServerPins is run before a project server starts (its first start,
// or a restart later in the session): the files its command line executes
// must still be those `odin trust` pinned.
func (a *app) checkServerPins(server string, argv []string, dir string) error {
	if !serverIsProject(server, a.src, a.plugins, a.editorMCP) {
		return nil
	}
	id := serverEntryID(server)
	now, err := policy.PinProgram(a.root, policy.Program{Argv: argv, Dir: dir})
	if msg := pinRefusal(id, now, err, a.trust.stored, a.trust.pinned); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// checkHookPins is the hooks' Check: a project hook runs only while the
// files it executes are those `odin trust` pinned.
func (a *app) checkHookPins(event string, hk config.Hook) error {
	if !hookIsProject(event, hk, a.src, a.plugins) {
		return nil
	}
	name := ""
	if p := hookPlugin(hk, a.plugins); p != nil {
		name = p.Name
	}
	id := hookEntryID(event, hk.Command, name)
	now, err := policy.PinProgram(a.root, hookProgram(a.root, hk))
	if msg := pinRefusal(id, now, err, a.trust.stored, a.trust.pinned); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// secretGuard keeps secrets out of what a project's MCP server config
// expands: ${VAR} in a project-declared server's command, args, env, url
// or headers never yields a secret-looking variable (the sandbox's rule)
// nor one whose value is a configured provider key.
type secretGuard struct {
	env     config.EnvFunc
	names   []string        // the providers' api_key_env and web search's
	values  map[string]bool // their values
	project func(server string) bool
}

func newSecretGuard(cfg *config.Config, env config.EnvFunc, project func(string) bool) *secretGuard {
	g := &secretGuard{env: env, values: map[string]bool{}, project: project}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" {
			g.names = append(g.names, p.APIKeyEnv)
		}
	}
	if cfg.Web.Search.APIKeyEnv != "" {
		g.names = append(g.names, cfg.Web.Search.APIKeyEnv)
	}
	for _, n := range g.names {
		if v, ok := env(n); ok && v != "" {
			g.values[v] = true
		}
	}
	return g
}

// hidden reports whether a project server's ${name} must not expand.
func (g *secretGuard) hidden(name string) bool {
	if sandbox.IsSecret(name, g.names) {
		return true
	}
	v, ok := g.env(name)
	return ok && g.values[v]
}

// lookup is the environment server's ${VAR}s expand from: the whole of
// it for the user's servers, without secrets for the project's.
func (g *secretGuard) lookup(server string) func(string) (string, bool) {
	if g == nil || !g.project(server) {
		if g == nil {
			return nil
		}
		return g.env
	}
	return func(name string) (string, bool) {
		if g.hidden(name) {
			return "", false
		}
		return g.env(name)
	}
}

// varRef finds the names of ${VAR} and ${VAR:-default}.
// Compiled on first use, not at every start.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`) })

// refused lists the secret variables s names in ${...} (command, args,
// env, url, headers), sorted.
func (g *secretGuard) refused(s config.MCPServer) []string {
	texts := append([]string{s.Command, s.URL}, s.Args...)
	for _, v := range s.Env {
		texts = append(texts, v)
	}
	for _, v := range s.Headers {
		texts = append(texts, v)
	}
	var out []string
	for _, t := range texts {
		for _, m := range varRef().FindAllStringSubmatch(t, -1) {
			if g.hidden(m[1]) {
				out = append(out, m[1])
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// guardProjectServers warns of every secret a project server's config
// would expand (it expands to nothing), and drops bearer_token_env from a
// server the project had a hand in: a token is sent only where the user's
// own config says.
func (a *app) guardProjectServers() {
	g := a.secretGuard()
	var servers map[string]config.MCPServer
	for _, name := range sortedKeys(a.cfg.MCP.Servers) {
		s := a.cfg.MCP.Servers[name]
		if !g.project(name) {
			continue
		}
		file := a.serverFile(name)
		for _, v := range g.refused(s) {
			a.warn(fmt.Sprintf("MCP server '%s' (%s): ${%s} is not expanded (it expands to nothing): a project's config never sends a secret to a server; declare the server in your own config to pass it",
				name, file, v))
		}
		if s.BearerTokenEnv != "" {
			a.warn(fmt.Sprintf("MCP server '%s' (%s): bearer_token_env %s is ignored: the project declares or changes this server, and only your own config's servers get a token",
				name, file, s.BearerTokenEnv))
			if servers == nil {
				servers = maps.Clone(a.cfg.MCP.Servers)
			}
			s.BearerTokenEnv = ""
			servers[name] = s
		}
	}
	if servers != nil {
		a.cfg.MCP.Servers = servers
	}
}

// serverFile names where a project server comes from, for messages.
func (a *app) serverFile(name string) string {
	if o := a.src.Origin("mcp.servers." + name); o != "" {
		return o
	}
	for _, p := range a.plugins {
		if _, ok := p.MCPServers[name]; ok {
			return "plugin " + p.Name
		}
	}
	return "the project"
}

// secretGuard is the guard of this app's servers.
func (a *app) secretGuard() *secretGuard {
	return newSecretGuard(a.cfg, a.env, func(server string) bool {
		return serverIsProject(server, a.src, a.plugins, a.editorMCP)
	})
}

// mcpNetwork is a stdio server's network: the host's for the user's own
// servers, the proxy for the project's (the allowed domains of
// permissions.network plus permissions.network.agents.mcp__NAME).
func (a *app) mcpNetwork(server string) (sandbox.Network, string) {
	if serverIsProject(server, a.src, a.plugins, a.editorMCP) {
		return sandbox.NetworkProxy, mcpNetworkAgent(server)
	}
	return sandbox.NetworkFull, ""
}

// mcpNetworkAgent is the permissions.network.agents key whose domains a
// project MCP server may reach.
func mcpNetworkAgent(server string) string { return "mcp__" + server }

// printPins shows what `odin trust` pins: each entry's project files with
// a short digest, and the entries that cannot be pinned.
func printPins(w io.Writer, entries []pinnedEntry) {
	header := false
	for _, e := range entries {
		if e.err == nil && len(e.pins) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "Pinned files (a change stops that entry until you trust again):")
			header = true
		}
		if e.err != nil {
			fmt.Fprintf(w, "  %s: cannot be pinned (%v); it will not run\n", e.id, e.err)
			continue
		}
		fmt.Fprintf(w, "  %s:\n", e.id)
		for _, line := range e.pins.Shown() {
			fmt.Fprintf(w, "    %s\n", config.Printable(line))
		}
	}
}
