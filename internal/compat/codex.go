package compat

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pelletier/go-toml/v2"
)

// CodexConfig is Codex's user file, in $CODEX_HOME (default ~/.codex).
const CodexConfig = "config.toml"

type codexProvider struct {
	Name        string            `toml:"name"`
	BaseURL     string            `toml:"base_url"`
	EnvKey      string            `toml:"env_key"`
	WireAPI     string            `toml:"wire_api"`
	HTTPHeaders map[string]string `toml:"http_headers"`
}

type codexServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	HTTPHeaders       map[string]string `toml:"http_headers"`
	Enabled           *bool             `toml:"enabled"`
	StartupTimeoutSec float64           `toml:"startup_timeout_sec"`
	ToolTimeoutSec    float64           `toml:"tool_timeout_sec"`
}

type codexProfile struct {
	Model         string `toml:"model"`
	ModelProvider string `toml:"model_provider"`
}

type codexFile struct {
	Model          string                   `toml:"model"`
	ModelProvider  string                   `toml:"model_provider"`
	ModelProviders map[string]codexProvider `toml:"model_providers"`
	MCPServers     map[string]codexServer   `toml:"mcp_servers"`
	Profiles       map[string]codexProfile  `toml:"profiles"`
	Profile        string                   `toml:"profile"`
}

var codexKnown = []string{"model", "model_provider", "model_providers", "mcp_servers", "profiles", "profile"}

func readCodex(o Options, r *Result) {
	dir := o.CodexHome
	if dir == "" && o.Home != "" {
		dir = filepath.Join(o.Home, ".codex")
	}
	if dir == "" {
		return
	}
	path := filepath.Join(dir, CodexConfig)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	b := newBuilder(Codex, path, false)
	defer b.finish(r)
	if err != nil {
		b.note("", "cannot read: %v", err)
		return
	}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		b.note("", "invalid TOML, ignored: %v", err)
		return
	}
	var f codexFile
	if err := toml.Unmarshal(data, &f); err != nil {
		b.note("", "unexpected shape, ignored: %v", err)
		return
	}
	for _, k := range sortedKeys(raw) {
		if !slices.Contains(codexKnown, k) {
			b.note(k, "Odin has no equivalent; not applied")
		}
	}
	for _, name := range sortedKeys(f.ModelProviders) {
		p := f.ModelProviders[name]
		if p.BaseURL == "" {
			b.note("model_providers."+name, "no base_url; not applied")
			continue
		}
		entry := map[string]any{"base_url": p.BaseURL}
		if p.EnvKey != "" {
			entry["api_key_env"] = p.EnvKey
		}
		if len(p.HTTPHeaders) > 0 {
			h := map[string]any{}
			for k, v := range p.HTTPHeaders {
				h[k] = v
			}
			entry["headers"] = h
		}
		b.set(entry, "providers", name)
		b.mapped("model_providers.%s → providers.%s", name, name)
		if p.WireAPI == "responses" {
			b.note("model_providers."+name+".wire_api", `"responses": Odin speaks the Chat Completions API; the provider must serve it too`)
		}
	}
	providerKnown := func(name string) bool { _, ok := f.ModelProviders[name]; return ok || name == "openai" }
	if f.ModelProvider != "" {
		if providerKnown(f.ModelProvider) {
			b.set(f.ModelProvider, "provider")
			b.mapped("model_provider %s → provider", quote(f.ModelProvider))
		} else {
			b.note("model_provider", "%s is one of Codex's built-in providers, which Odin does not know; define it under providers", quote(f.ModelProvider))
		}
	}
	if f.Model != "" {
		b.set(f.Model, "models", "main")
		b.mapped("model %s → models.main", quote(f.Model))
	}
	for _, name := range sortedKeys(f.MCPServers) {
		s := f.MCPServers[name]
		entry := map[string]any{}
		switch {
		case s.Command != "":
			entry["command"] = s.Command
			if len(s.Args) > 0 {
				args := make([]any, len(s.Args))
				for i, a := range s.Args {
					args[i] = a
				}
				entry["args"] = args
			}
			if len(s.Env) > 0 {
				env := map[string]any{}
				for k, v := range s.Env {
					env[k] = v
				}
				entry["env"] = env
			}
		case s.URL != "":
			entry["url"] = s.URL
			if s.BearerTokenEnvVar != "" {
				entry["bearer_token_env"] = s.BearerTokenEnvVar
			}
			if len(s.HTTPHeaders) > 0 {
				h := map[string]any{}
				for k, v := range s.HTTPHeaders {
					h[k] = v
				}
				entry["headers"] = h
			}
		default:
			b.note("mcp_servers."+name, "neither command nor url; not applied")
			continue
		}
		if s.Enabled != nil && !*s.Enabled {
			entry["disabled"] = true
		}
		if s.ToolTimeoutSec > 0 {
			entry["timeout"] = formatSeconds(s.ToolTimeoutSec)
		}
		if s.StartupTimeoutSec > 0 {
			b.note("mcp_servers."+name+".startup_timeout_sec", "Odin's mcp.connect_timeout is one value for every server; not applied")
		}
		b.set(entry, "mcp", "servers", name)
		b.mapped("mcp_servers.%s → mcp.servers.%s", name, name)
	}
	if r.Profiles == nil {
		r.Profiles = map[string]Profile{}
	}
	for _, name := range sortedKeys(f.Profiles) {
		p := f.Profiles[name]
		keys := map[string]any{}
		if p.Model != "" {
			keys["models.main"] = p.Model
		}
		if p.ModelProvider != "" {
			if providerKnown(p.ModelProvider) {
				keys["provider"] = p.ModelProvider
			} else {
				b.note("profiles."+name+".model_provider", "%s is not defined under model_providers; not applied", quote(p.ModelProvider))
			}
		}
		r.Profiles[name] = Profile{Source: path, Keys: keys}
		b.mapped("profiles.%s → odin --profile %s", name, name)
	}
	if f.Profile != "" {
		b.note("profile", "Odin uses a profile only when --profile names it; the default profile %s is not applied", quote(f.Profile))
	}
}

func formatSeconds(s float64) string {
	return (fmtFloat(s)) + "s"
}
