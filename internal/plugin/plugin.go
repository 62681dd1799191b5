package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/compat"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/workspace"
)

// ManifestPath is where a plugin's manifest lives, relative to its root.
const ManifestPath = ".claude-plugin/plugin.json"

// RootVar is replaced by the plugin's directory in hook commands and MCP
// server settings, as Claude Code does.
const RootVar = "${CLAUDE_PLUGIN_ROOT}"

// reName is Claude Code's rule for plugin names (kebab-case); it also
// keeps a name usable as a directory name.
var reName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// reServer is what an MCP server name may hold (config's rule: it becomes
// part of tool names mcp__NAME__TOOL).
var reServer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// Manifest is .claude-plugin/plugin.json. Component paths may be a string
// or a list of strings; hooks and mcpServers may also be inline objects.
type Manifest struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Description  string          `json:"description"`
	Commands     json.RawMessage `json:"commands"`
	Agents       json.RawMessage `json:"agents"`
	Skills       json.RawMessage `json:"skills"`
	Hooks        json.RawMessage `json:"hooks"`
	MCPServers   json.RawMessage `json:"mcpServers"`
	OutputStyles json.RawMessage `json:"outputStyles"`
	LSPServers   json.RawMessage `json:"lspServers"`
}

// Plugin is a loaded plugin: its components in Odin's terms and the
// parts Odin cannot use. A Plugin is immutable once loaded.
type Plugin struct {
	Name        string
	Version     string
	Description string
	// Dir is the plugin's root (${CLAUDE_PLUGIN_ROOT}).
	Dir string
	// Project is true for a plugin the project ships (.odin/plugins),
	// which waits for `odin trust` like the project's config.
	Project bool
	// Disabled is set by Discover from the user's state.
	Disabled bool

	// AgentDirs and CommandDirs hold agent and command Markdown files in
	// Claude Code's format, which the roster and the REPL read as they are.
	AgentDirs   []string
	CommandDirs []string
	// Agents and Commands name the files found there.
	Agents   []string
	Commands []string
	// Hooks are the plugin's hooks by Odin event, ${CLAUDE_PLUGIN_ROOT}
	// replaced and tool matchers mapped to Odin's tool names.
	Hooks map[string][]config.Hook
	// MCPServers are the plugin's MCP servers by name.
	MCPServers map[string]config.MCPServer
	// Unsupported lists what Odin cannot use, one line each.
	Unsupported []string
}

// HookCount is the number of hooks across events.
func (p *Plugin) HookCount() int {
	n := 0
	for _, l := range p.Hooks {
		n += len(l)
	}
	return n
}

// Load reads the plugin at dir. An error means the plugin cannot be used
// at all (no or invalid manifest, a component file that does not parse, a
// path leading out of the plugin); what Odin lacks is in Unsupported.
func Load(dir string) (*Plugin, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	dir = abs
	mpath := filepath.Join(dir, ManifestPath)
	data, err := os.ReadFile(mpath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("plugin %s: no %s: not a plugin in Claude Code's format", dir, ManifestPath)
		}
		return nil, fmt.Errorf("plugin %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("plugin %s%s: invalid JSON: %w", mpath, compat.JSONErrorPlace(data, err), err)
	}
	if !reName().MatchString(m.Name) {
		return nil, fmt.Errorf("plugin %s: name: must be kebab-case (lower-case letters, digits and '-'), got %q", mpath, m.Name)
	}
	p := &Plugin{Name: m.Name, Version: m.Version, Description: m.Description, Dir: dir,
		Hooks: map[string][]config.Hook{}, MCPServers: map[string]config.MCPServer{}}
	l := loader{p: p, manifest: mpath}

	agentDirs, err := l.dirs("agents", m.Agents)
	if err != nil {
		return nil, err
	}
	for _, d := range agentDirs {
		files := mdFiles(d, false)
		if len(files) > 0 {
			p.AgentDirs = append(p.AgentDirs, d)
			p.Agents = append(p.Agents, files...)
		}
	}
	cmdDirs, err := l.dirs("commands", m.Commands)
	if err != nil {
		return nil, err
	}
	for _, d := range cmdDirs {
		files := mdFiles(d, true)
		if len(files) > 0 {
			p.CommandDirs = append(p.CommandDirs, d)
			p.Commands = append(p.Commands, files...)
		}
	}
	if err := l.hooks(m.Hooks); err != nil {
		return nil, err
	}
	if err := l.mcp(m.MCPServers); err != nil {
		return nil, err
	}
	skillDirs, err := l.dirs("skills", m.Skills)
	if err != nil {
		return nil, err
	}
	var skills []string
	for _, d := range skillDirs {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(d, e.Name(), "SKILL.md")); err == nil {
				skills = append(skills, e.Name())
			}
		}
	}
	if len(skills) > 0 {
		p.Unsupported = append(p.Unsupported, "skills "+strings.Join(skills, ", ")+": Odin has no skills")
	}
	for _, c := range []struct {
		key string
		raw json.RawMessage
	}{{"outputStyles", m.OutputStyles}, {"lspServers", m.LSPServers}} {
		if len(c.raw) > 0 && string(c.raw) != "null" {
			p.Unsupported = append(p.Unsupported, c.key+": not supported by Odin")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".lsp.json")); err == nil && len(m.LSPServers) == 0 {
		p.Unsupported = append(p.Unsupported, ".lsp.json: LSP servers are not supported by Odin")
	}
	sort.Strings(p.Agents)
	sort.Strings(p.Commands)
	return p, nil
}

type loader struct {
	p        *Plugin
	manifest string
}

// inside resolves a manifest path against the plugin root and refuses
// one that leads out of it (by .. or a symlink).
func (l loader) inside(key, rel string) (string, error) {
	rel = strings.TrimPrefix(strings.ReplaceAll(rel, RootVar, "."), "./")
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("plugin %s: %s: %q must be a path inside the plugin", l.manifest, key, rel)
	}
	path := filepath.Join(l.p.Dir, rel)
	real, err := workspace.Resolve("/", path)
	if err != nil {
		return "", fmt.Errorf("plugin %s: %s: %w", l.manifest, key, err)
	}
	rootReal, err := workspace.Resolve("/", l.p.Dir)
	if err != nil {
		return "", err
	}
	if !workspace.Within(rootReal, real) {
		return "", fmt.Errorf("plugin %s: %s: %q leads outside the plugin", l.manifest, key, rel)
	}
	return path, nil
}

// paths decodes a component path entry: a string or a list of strings.
func paths(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

// dirs is the default directory of a component plus the manifest's extra
// paths (which supplement it, as in Claude Code). A listed single file
// is reported unsupported: Odin reads component directories.
func (l loader) dirs(key string, raw json.RawMessage) ([]string, error) {
	out := []string{filepath.Join(l.p.Dir, key)}
	list, ok := paths(raw)
	if !ok {
		return nil, fmt.Errorf("plugin %s: %s: want a path or a list of paths", l.manifest, key)
	}
	for _, rel := range list {
		path, err := l.inside(key, rel)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return nil, fmt.Errorf("plugin %s: %s: %w", l.manifest, key, err)
		case !fi.IsDir():
			l.p.Unsupported = append(l.p.Unsupported, fmt.Sprintf("%s: %s is a single file; Odin reads %s directories", key, rel, key))
		case !slices.Contains(out, path):
			out = append(out, path)
		}
	}
	return out, nil
}

// mdFiles names the .md files of dir (and of its subdirectories when
// deep, as commands are namespaced by subdirectory).
func mdFiles(dir string, deep bool) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != dir && !deep {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, strings.TrimSuffix(filepath.ToSlash(rel), ".md"))
		}
		return nil
	})
	return out
}

// claudeHooks is the shape of hooks/hooks.json: events, each a list of
// matcher groups, each a list of hooks.
type claudeHooks map[string][]struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string  `json:"type"`
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"` // seconds
	} `json:"hooks"`
}

// claudeTools maps Claude Code's tool names to Odin's, for hook matchers.
var claudeTools = map[string]string{
	"Bash": "ExecuteCommand", "Read": "ReadFile", "Write": "WriteFile", "Edit": "EditTool",
	"MultiEdit": "MultiEditTool", "Grep": "Grep", "Glob": "Glob", "LS": "LS",
	"WebFetch": "WebFetch", "WebSearch": "WebSearch", "TodoWrite": "TodoWrite",
}

// odinToClaude is claudeTools reversed: a plugin's hook reads tool_name
// as Claude Code names it.
var odinToClaude = func() map[string]string {
	m := map[string]string{}
	for c, o := range claudeTools {
		if c != o {
			m[o] = c
		}
	}
	return m
}()

// sources reads a component's documents: the default file def when it
// exists, plus the manifest's key — paths inside the plugin, or the
// document inline. They come back by name, with the names sorted.
func (l loader) sources(def, key string, raw json.RawMessage) (map[string][]byte, []string, error) {
	sources := map[string][]byte{}
	if data, err := os.ReadFile(def); err == nil {
		sources[def] = data
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("plugin %s: %w", def, err)
	}
	if list, ok := paths(raw); ok {
		for _, rel := range list {
			path, err := l.inside(key, rel)
			if err != nil {
				return nil, nil, err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, nil, fmt.Errorf("plugin %s: %s: %w", l.manifest, key, err)
			}
			sources[path] = data
		}
	} else {
		sources[l.manifest+" "+key] = raw
	}
	names := slices.Sorted(maps.Keys(sources))
	return sources, names, nil
}

func (l loader) hooks(raw json.RawMessage) error {
	sources, names, err := l.sources(filepath.Join(l.p.Dir, "hooks", "hooks.json"), "hooks", raw)
	if err != nil {
		return err
	}
	for _, src := range names {
		var doc struct {
			Hooks json.RawMessage `json:"hooks"`
		}
		data := sources[src]
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("plugin %s%s: invalid JSON: %w", src, compat.JSONErrorPlace(data, err), err)
		}
		if len(doc.Hooks) > 0 {
			data = doc.Hooks
		}
		var events claudeHooks
		if err := json.Unmarshal(data, &events); err != nil {
			return fmt.Errorf("plugin %s: hooks: %w", src, err)
		}
		l.addHooks(events)
	}
	return nil
}

func (l loader) addHooks(events claudeHooks) {
	names := make([]string, 0, len(events))
	for e := range events {
		names = append(names, e)
	}
	sort.Strings(names)
	for _, event := range names {
		if !slices.Contains(policy.HookEvents(), event) {
			l.p.Unsupported = append(l.p.Unsupported, "hooks."+event+": Odin has no such event")
			continue
		}
		for _, group := range events[event] {
			matcher, dropped := l.matcher(event, group.Matcher)
			for _, d := range dropped {
				l.p.Unsupported = append(l.p.Unsupported, fmt.Sprintf("hooks.%s matcher %q: %s", event, group.Matcher, d))
			}
			if matcher == "" && len(dropped) > 0 {
				continue // none of its tools exists here: the hook would match everything
			}
			for _, h := range group.Hooks {
				if h.Type != "" && h.Type != "command" {
					l.p.Unsupported = append(l.p.Unsupported, fmt.Sprintf("hooks.%s: hook type %q: Odin runs command hooks only", event, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					l.p.Unsupported = append(l.p.Unsupported, fmt.Sprintf("hooks.%s: a hook without a command", event))
					continue
				}
				l.p.Hooks[event] = append(l.p.Hooks[event], config.Hook{Matcher: matcher,
					Command:    strings.ReplaceAll(h.Command, RootVar, l.p.Dir),
					Timeout:    time.Duration(h.Timeout * float64(time.Second)),
					PluginRoot: l.p.Dir,
					ToolNames:  odinToClaude})
			}
		}
	}
}

// matcher turns a Claude Code matcher (a regular expression over Claude's
// tool names) into Odin's: "|"-separated exact names, Claude's tool names
// replaced by Odin's. A pattern Odin cannot express is dropped and said.
func (l loader) matcher(event, m string) (string, []string) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" || m == ".*" {
		return "", nil
	}
	tools := event == policy.PreToolUse || event == policy.PostToolUse
	var keep, dropped []string
	for _, alt := range strings.Split(m, "|") {
		alt = strings.TrimSpace(alt)
		switch {
		case alt == "":
		case strings.ContainsAny(alt, `.*+?[](){}^$\`):
			dropped = append(dropped, fmt.Sprintf("%q is a pattern; Odin matches exact names", alt))
		case tools && claudeTools[alt] != "":
			keep = append(keep, claudeTools[alt])
		case tools && alt == "Task":
			dropped = append(dropped, `"Task": Odin's agents are tools named agent_NAME`)
		default:
			keep = append(keep, alt)
		}
	}
	return strings.Join(keep, "|"), dropped
}

// mcp reads the plugin's MCP servers: .mcp.json at its root, or the
// manifest's mcpServers (a path, or the servers inline).
func (l loader) mcp(raw json.RawMessage) error {
	sources, names, err := l.sources(filepath.Join(l.p.Dir, ".mcp.json"), "mcpServers", raw)
	if err != nil {
		return err
	}
	for _, src := range names {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(sources[src], &doc); err != nil {
			return fmt.Errorf("plugin %s%s: invalid JSON: %w", src, compat.JSONErrorPlace(sources[src], err), err)
		}
		if inner, ok := doc["mcpServers"]; ok {
			doc = nil
			if err := json.Unmarshal(inner, &doc); err != nil {
				return fmt.Errorf("plugin %s: mcpServers: %w", src, err)
			}
		}
		servers := make([]string, 0, len(doc))
		for n := range doc {
			servers = append(servers, n)
		}
		sort.Strings(servers)
		for _, name := range servers {
			s, err := l.server(src, name, doc[name])
			if err != nil {
				return err
			}
			l.p.MCPServers[name] = s
		}
	}
	return nil
}

func (l loader) server(src, name string, raw json.RawMessage) (config.MCPServer, error) {
	if !reServer().MatchString(name) || strings.Contains(name, "__") {
		return config.MCPServer{}, fmt.Errorf("plugin %s: mcpServers.%s: a server name may hold only letters, digits, \"-\" and \"_\" (no \"__\")", src, name)
	}
	// Claude Code's keys that Odin understands; others (oauth settings and
	// the like) are ignored, as for a project's .mcp.json.
	var e struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return config.MCPServer{}, fmt.Errorf("plugin %s: mcpServers.%s: %w", src, name, err)
	}
	if (e.Command == "") == (e.URL == "") {
		return config.MCPServer{}, fmt.Errorf("plugin %s: mcpServers.%s: needs command (a stdio server) or url (an http or sse server), not both", src, name)
	}
	sub := func(s string) string { return strings.ReplaceAll(s, RootVar, l.p.Dir) }
	s := config.MCPServer{Type: e.Type, Command: sub(e.Command), URL: sub(e.URL)}
	for _, a := range e.Args {
		s.Args = append(s.Args, sub(a))
	}
	if len(e.Env) > 0 || s.Command != "" {
		s.Env = map[string]string{}
		for k, v := range e.Env {
			s.Env[k] = sub(v)
		}
	}
	if s.Command != "" {
		// A stdio server's scripts may read it, as under Claude Code.
		s.Env["CLAUDE_PLUGIN_ROOT"] = l.p.Dir
	}
	if len(e.Headers) > 0 {
		s.Headers = map[string]string{}
		for k, v := range e.Headers {
			s.Headers[k] = sub(v)
		}
	}
	return s, nil
}
