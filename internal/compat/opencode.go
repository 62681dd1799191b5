package compat

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// OpencodeFile is opencode's config file, at the project root and in
// $XDG_CONFIG_HOME/opencode.
const OpencodeFile = "opencode.json"

// opencodeTools maps opencode's tool names to Odin's ("" when Odin has no
// such tool).
var opencodeTools = map[string]string{
	"bash": "ExecuteCommand", "edit": "EditTool", "write": "WriteFile", "read": "ReadFile",
	"grep": "Grep", "glob": "Glob", "list": "LS", "patch": "MultiEditTool",
	"todowrite": "TodoWrite", "todoread": "TodoWrite", "webfetch": "WebFetch", "websearch": "WebSearch",
}

// OpencodeTool returns Odin's name for an opencode tool, "" when Odin has
// none.
func OpencodeTool(name string) string { return opencodeTools[strings.ToLower(name)] }

// OpencodeToolMap reads opencode's tools map ({write: true, bash: false}):
// toggles over every tool, not an allow list. The tools switched off are
// returned under Odin's names; names Odin has no tool for are in unknown.
func OpencodeToolMap(m map[string]bool) (disallowed, unknown []string) {
	for _, k := range sortedKeys(m) {
		if m[k] {
			continue
		}
		if o := OpencodeTool(k); o != "" {
			if !slices.Contains(disallowed, o) {
				disallowed = append(disallowed, o)
			}
		} else if o := ClaudeTool(k); o != "" {
			disallowed = append(disallowed, o)
		} else {
			unknown = append(unknown, k)
		}
	}
	return disallowed, unknown
}

type opencodeFile struct {
	Model      string                     `json:"model"`
	SmallModel string                     `json:"small_model"`
	MCP        map[string]opencodeServer  `json:"mcp"`
	Permission map[string]json.RawMessage `json:"permission"`
	Agent      map[string]opencodeAgent   `json:"agent"`
	Provider   map[string]struct {
		Options struct {
			BaseURL string `json:"baseURL"`
			APIKey  string `json:"apiKey"`
		} `json:"options"`
	} `json:"provider"`
}

type opencodeServer struct {
	Type        string            `json:"type"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	URL         string            `json:"url"`
	Headers     map[string]string `json:"headers"`
	Enabled     *bool             `json:"enabled"`
}

type opencodeAgent struct {
	Description string          `json:"description"`
	Model       string          `json:"model"`
	Prompt      string          `json:"prompt"`
	Tools       map[string]bool `json:"tools"`
	Disable     bool            `json:"disable"`
	Mode        string          `json:"mode"`
}

var opencodeKnown = []string{"$schema", "model", "small_model", "mcp", "permission", "agent", "provider"}

func readOpencode(o Options, r *Result) {
	cfgHome := o.ConfigHome
	if cfgHome == "" && o.Home != "" {
		cfgHome = filepath.Join(o.Home, ".config")
	}
	if cfgHome != "" {
		readOpencodeFile(filepath.Join(cfgHome, "opencode", OpencodeFile), false, r)
	}
	if o.Root != "" {
		readOpencodeFile(filepath.Join(o.Root, OpencodeFile), true, r)
	}
}

func readOpencodeFile(path string, project bool, r *Result) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	b := newBuilder(Opencode, path, project)
	defer b.finish(r)
	if err != nil {
		b.note("", "cannot read: %v", err)
		return
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		b.jsonNote("invalid JSON", data, err)
		return
	}
	b.data, b.offsets = data, jsonKeyOffsets(data)
	var f opencodeFile
	if err := json.Unmarshal(data, &f); err != nil {
		b.jsonNote("unexpected shape", data, err)
		return
	}
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(opencodeKnown, k) {
			b.note(k, "Odin has no equivalent; not applied")
		}
	}
	for _, name := range sortedKeys(f.Provider) {
		p := f.Provider[name]
		if p.Options.BaseURL == "" {
			if name != "openai" {
				b.note("provider."+name, "no options.baseURL; not applied")
			}
			continue
		}
		entry := map[string]any{"base_url": p.Options.BaseURL}
		if v, ok := strings.CutPrefix(p.Options.APIKey, "{env:"); ok && strings.HasSuffix(v, "}") {
			entry["api_key_env"] = strings.TrimSuffix(v, "}")
		} else if p.Options.APIKey != "" {
			b.note("provider."+name+".options.apiKey", "Odin never reads a key from a file; name its variable (providers.%s.api_key_env)", name)
		}
		b.set(entry, "providers", name)
		b.mapped("provider.%s → providers.%s", name, name)
	}
	for _, rm := range [][2]string{{"main", f.Model}, {"small", f.SmallModel}} {
		role, m := rm[0], rm[1]
		if m == "" {
			continue
		}
		prov, id, ok := strings.Cut(m, "/")
		if !ok {
			id, prov = m, ""
		}
		b.set(id, "models", role)
		if prov != "" && prov != "openai" {
			if _, defined := f.Provider[prov]; defined {
				b.set(prov, "model_info", id, "provider")
			} else {
				b.note("model", "provider %s is one of opencode's built-ins, which Odin does not know; define it under providers", quote(prov))
			}
		}
		b.mapped("%s %s → models.%s", map[string]string{"main": "model", "small": "small_model"}[role], quote(m), role)
	}
	for _, name := range sortedKeys(f.MCP) {
		s := f.MCP[name]
		entry := map[string]any{}
		switch {
		case len(s.Command) > 0:
			entry["command"] = s.Command[0]
			if len(s.Command) > 1 {
				args := make([]any, 0, len(s.Command)-1)
				for _, a := range s.Command[1:] {
					args = append(args, a)
				}
				entry["args"] = args
			}
			if len(s.Environment) > 0 {
				env := map[string]any{}
				for k, v := range s.Environment {
					env[k] = v
				}
				entry["env"] = env
			}
		case s.URL != "":
			entry["url"] = s.URL
			if len(s.Headers) > 0 {
				h := map[string]any{}
				for k, v := range s.Headers {
					h[k] = v
				}
				entry["headers"] = h
			}
		default:
			b.note("mcp."+name, "neither command nor url; not applied")
			continue
		}
		if s.Enabled != nil && !*s.Enabled {
			entry["disabled"] = true
		}
		b.set(entry, "mcp", "servers", name)
		b.mapped("mcp.%s → mcp.servers.%s", name, name)
	}
	opencodePermission(b, f.Permission)
	for _, name := range sortedKeys(f.Agent) {
		a := f.Agent[name]
		if a.Disable {
			b.note("agent."+name+".disable", "opencode's own agents are not Odin's; nothing to disable")
			continue
		}
		entry := map[string]any{}
		if a.Description != "" {
			entry["description"] = a.Description
		}
		if p, ok := strings.CutPrefix(a.Prompt, "{file:"); ok && strings.HasSuffix(p, "}") {
			pf := strings.TrimSuffix(p, "}")
			if !filepath.IsAbs(pf) && !strings.HasPrefix(pf, "~/") {
				pf = filepath.Join(filepath.Dir(path), pf)
			}
			entry["prompt_file"] = pf
		} else if a.Prompt != "" {
			entry["prompt"] = a.Prompt
		}
		if a.Model != "" {
			_, id, ok := strings.Cut(a.Model, "/")
			if !ok {
				id = a.Model
			}
			entry["model"] = id
		}
		if len(a.Tools) > 0 {
			dis, unknown := OpencodeToolMap(a.Tools)
			if len(dis) > 0 {
				list := make([]any, len(dis))
				for i, d := range dis {
					list[i] = d
				}
				entry["disallowed_tools"] = list
			}
			if len(unknown) > 0 {
				b.note("agent."+name+".tools", "no Odin tool for %s; not applied", joinQuoted(unknown))
			}
		}
		if a.Mode == "primary" {
			b.note("agent."+name+".mode", `"primary": Odin's Orchestrator is the one primary agent; this one becomes a specialist`)
		}
		if _, ok := entry["prompt"]; !ok {
			if _, ok := entry["prompt_file"]; !ok {
				b.note("agent."+name, "no prompt: an Odin agent needs one; not applied")
				continue
			}
		}
		if _, ok := entry["description"]; !ok {
			entry["description"] = name
		}
		b.set(entry, "agents", name)
		b.mapped("agent.%s → agents.%s", name, name)
	}
}

// opencodePermission maps opencode's permission section: bash as one
// action or a map of command patterns to actions; edit and webfetch as
// one action.
func opencodePermission(b *builder, perm map[string]json.RawMessage) {
	for _, k := range sortedKeys(perm) {
		raw := perm[k]
		var action string
		var patterns map[string]string
		if json.Unmarshal(raw, &action) != nil {
			if json.Unmarshal(raw, &patterns) != nil {
				b.note("permission."+k, "unexpected value; not applied")
				continue
			}
		}
		switch k {
		case "bash":
			if patterns == nil {
				patterns = map[string]string{"*": action}
			}
			for _, pat := range sortedKeys(patterns) {
				p := strings.TrimSpace(pat)
				if !validCommandPattern(p) {
					b.note("permission.bash."+pat, "not a command pattern Odin can read; not applied")
					continue
				}
				switch patterns[pat] {
				case "allow":
					b.add(p, "permissions", "allowed_commands")
					b.mapped("permission.bash %s: allow → permissions.allowed_commands", quote(pat))
				case "deny":
					b.add(p, "permissions", "forbidden_commands")
					b.mapped("permission.bash %s: deny → permissions.forbidden_commands", quote(pat))
				case "ask":
					b.mapped("permission.bash %s: ask → Odin asks for commands not allowed", quote(pat))
				default:
					b.note("permission.bash."+pat, "unknown action %s; not applied", quote(patterns[pat]))
				}
			}
		case "edit":
			switch action {
			case "allow":
				b.mapped("permission.edit: allow → edit mode")
			case "deny":
				b.set("plan", "mode")
				b.mapped("permission.edit: deny → mode: plan (nothing is edited)")
			default:
				b.note("permission.edit", "%s: Odin does not ask per edit; edit mode edits inside the project", quote(action))
			}
		case "webfetch":
			if action == "allow" {
				b.mapped("permission.webfetch: allow → already allowed")
			} else {
				b.note("permission.webfetch", "%s: Odin has no WebFetch approval; not applied", quote(action))
			}
		default:
			b.note("permission."+k, "Odin has no equivalent; not applied")
		}
	}
}
