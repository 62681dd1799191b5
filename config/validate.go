package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

var (
	agentName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,40}$`) })
	envVarName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// headerName is RFC 9110's token.
	headerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
)

// Validate checks the whole configuration and returns every problem at
// once in an *Error (errors.Is ErrInvalid), each naming its key; nil when
// it is valid. It reads the file system only to check that prompt files
// exist. Load calls it and adds to each problem the source of its key.
func (c *Config) Validate() error {
	v := &validator{}
	v.oneOf("mode", c.Mode, Modes())
	v.positive("max_turns", c.MaxTurns)

	v.providers(c)
	v.nonEmpty("models.main", c.Models.Main, "a model id, e.g. gpt-4o")
	v.nonEmpty("models.small", c.Models.Small, "a model id, e.g. gpt-4o-mini")
	for _, id := range sortedKeys(c.ModelInfo) {
		v.modelInfo(c, "model_info."+id, c.ModelInfo[id])
	}
	for _, name := range sortedKeys(c.Agents) {
		v.agent("agents."+name, name, c.Agents[name])
	}

	notNegative(v, "supervision.max_restarts", c.Supervision.MaxRestarts)
	v.positiveDuration("supervision.window", c.Supervision.Window)
	v.budgets(c)

	v.globs("quality.risk_paths", c.Quality.RiskPaths)
	v.globs("quality.public_api", c.Quality.PublicAPI)
	notNegative(v, "quality.max_fix_rounds", c.Quality.MaxFixRounds)
	v.positiveDuration("quality.check_timeout", c.Quality.CheckTimeout)
	v.quality(c.Quality)

	v.strings("permissions.allowed_commands", c.Permissions.AllowedCommands)
	v.strings("permissions.forbidden_commands", c.Permissions.ForbiddenCommands)
	v.strings("permissions.deny_read", c.Permissions.DenyRead)
	v.strings("permissions.deny_read", c.Permissions.ProjectDenyRead)
	for i, d := range c.Permissions.AdditionalDirs {
		if !filepath.IsAbs(d) {
			v.add(fmt.Sprintf("permissions.additional_dirs[%d]", i), "must be an absolute path (got %q)", d)
		}
	}
	v.sandbox(c.Permissions)

	v.hooks(c.Hooks)

	if c.Context.CompactAt <= 0 || c.Context.CompactAt >= 1 {
		v.add("context.compact_at", "must be between 0 and 1, exclusive (got %v)", c.Context.CompactAt)
	}
	notNegative(v, "context.keep_recent", c.Context.KeepRecent)
	if c.Context.MaxToolArgument < 1<<10 {
		v.add("context.max_tool_argument", "must be at least 1024 bytes (got %d)", c.Context.MaxToolArgument)
	}

	v.web(c.Web)
	v.oneOf("log.level", c.Log.Level, LogLevels())
	v.mcp(c.MCP)

	if len(v.problems) == 0 {
		return nil
	}
	return &Error{Problems: v.problems}
}

type validator struct {
	problems []Problem
}

func (v *validator) add(key, format string, args ...any) {
	v.problems = append(v.problems, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) oneOf(key, val string, allowed []string) {
	if !slices.Contains(allowed, val) {
		v.add(key, "must be one of %s (got %q)", strings.Join(allowed, ", "), val)
	}
}

func (v *validator) positive(key string, n int) {
	if n <= 0 {
		v.add(key, "must be positive (got %d)", n)
	}
}

func notNegative[T int | int64](v *validator, key string, n T) {
	if n < 0 {
		v.add(key, "must not be negative (got %d)", n)
	}
}

func (v *validator) positiveDuration(key string, d time.Duration) {
	if d <= 0 {
		v.add(key, "must be a positive duration (got %s)", d)
	}
}

func (v *validator) notNegativeDuration(key string, d time.Duration) {
	if d < 0 {
		v.add(key, "must not be negative (got %s)", d)
	}
}

func (v *validator) nonEmpty(key, val, what string) {
	if strings.TrimSpace(val) == "" {
		v.add(key, "must be set: %s", what)
	}
}

// strings checks a list of names or patterns: each non-empty.
func (v *validator) strings(key string, list []string) {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			v.add(fmt.Sprintf("%s[%d]", key, i), "must not be empty")
		}
	}
}

func (v *validator) globs(key string, list []string) {
	for i, g := range list {
		k := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case strings.TrimSpace(g) == "":
			v.add(k, "must not be empty")
		case !doublestar.ValidatePattern(g):
			v.add(k, "invalid glob %q", g)
		}
	}
}

func (v *validator) envName(key, name string) {
	switch {
	case name == "":
	case strings.HasPrefix(name, "sk-") || len(name) > 40 && !strings.Contains(name, "_"):
		v.add(key, "looks like a secret: %s names the environment variable that holds the key (e.g. OPENAI_API_KEY); keys never go in config files", key[strings.LastIndex(key, ".")+1:])
	case !envVarName().MatchString(name):
		v.add(key, "must be an environment variable name (got %q)", name)
	}
}

func (v *validator) httpURL(key, raw, example string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(key, "must be an http or https URL such as %s (got %q)", example, raw)
	}
}

func (v *validator) providers(c *Config) {
	names := sortedKeys(c.Providers)
	if c.Provider == "" {
		v.add("provider", "must name a provider (one of providers: %s)", strings.Join(names, ", "))
	} else if _, ok := c.Providers[c.Provider]; !ok {
		v.add("provider", "unknown provider %q%s", c.Provider, known(c.Provider, names))
	}
	for _, name := range names {
		p := c.Providers[name]
		key := "providers." + name
		if strings.ContainsAny(name, " \t\r\n") {
			v.add(key, "a provider name must not contain spaces")
		}
		if p.BaseURL == "" {
			v.add(key+".base_url", "must be set: the URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1")
		} else {
			v.httpURL(key+".base_url", p.BaseURL, "http://localhost:11434/v1")
		}
		v.envName(key+".api_key_env", p.APIKeyEnv)
		v.positiveDuration(key+".timeout", p.Timeout)
		v.notNegativeDuration(key+".idle_timeout", p.IdleTimeout)
		v.notNegativeDuration(key+".idle_conn_timeout", p.IdleConnTimeout)
		v.notNegativeDuration(key+".budget", p.Budget)
		notNegative(v, key+".max_retries", p.MaxRetries)
		v.rateLimit(key+".rate_limit", p.RateLimit)
		for _, h := range sortedKeys(p.Headers) {
			if !headerName().MatchString(h) {
				v.add(key+".headers."+h, "not a valid HTTP header name")
			}
			if strings.ContainsAny(p.Headers[h], "\r\n") {
				v.add(key+".headers."+h, "a header value must not contain line breaks")
			}
		}
	}
}

func (v *validator) modelInfo(c *Config, key string, m ModelInfo) {
	if m.Provider != "" {
		if _, ok := c.Providers[m.Provider]; !ok {
			v.add(key+".provider", "unknown provider %q%s", m.Provider, known(m.Provider, sortedKeys(c.Providers)))
		}
	}
	v.positive(key+".context_window", m.ContextWindow)
	notNegative(v, key+".max_output", m.MaxOutput)
	v.rateLimit(key+".rate_limit", m.RateLimit)
	if m.ContextWindow > 0 && m.MaxOutput > m.ContextWindow {
		v.add(key+".max_output", "must not exceed context_window (%d > %d)", m.MaxOutput, m.ContextWindow)
	}
	for _, p := range []struct {
		name string
		val  float64
	}{{"input", m.Price.Input}, {"cached_input", m.Price.CachedInput}, {"output", m.Price.Output}} {
		if p.val < 0 {
			v.add(key+".price."+p.name, "must not be negative (got %v)", p.val)
		}
	}
}

func (v *validator) agent(key, name string, a Agent) {
	if !agentName().MatchString(name) {
		v.add(key, "invalid agent name: use lower-case letters, digits, '-' and '_', starting with a letter, at most 41 characters")
	}
	for _, list := range []struct {
		key   string
		tools []string
	}{{key + ".tools", a.Tools}, {key + ".disallowed_tools", a.DisallowedTools}} {
		for i, t := range list.tools {
			switch {
			case strings.TrimSpace(t) == "":
				v.add(fmt.Sprintf("%s[%d]", list.key, i), "must not be empty")
			case strings.ContainsAny(t, " \t\r\n"):
				v.add(fmt.Sprintf("%s[%d]", list.key, i), "a tool name must not contain spaces (got %q)", t)
			}
		}
	}
	v.notNegativeDuration(key+".timeout", a.Timeout)
	v.notNegativeDuration(key+".max_timeout", a.MaxTimeout)
	if a.Timeout > 0 && a.MaxTimeout > 0 && a.Timeout > a.MaxTimeout {
		v.add(key+".timeout", "must not exceed max_timeout (%s > %s)", a.Timeout, a.MaxTimeout)
	}
	notNegative(v, key+".max_turns", a.MaxTurns)
	notNegative(v, key+".max_tokens", a.MaxTokens)
	v.budget(key+".budget", a.Budget)
	if a.Prompt != "" && a.PromptFile != "" {
		v.add(key, "set prompt or prompt_file, not both")
	}
	if a.PromptFile != "" {
		if fi, err := os.Stat(a.PromptFile); err != nil {
			v.add(key+".prompt_file", "cannot read %s: %v", a.PromptFile, unwrapPathError(err))
		} else if fi.IsDir() {
			v.add(key+".prompt_file", "%s is a directory", a.PromptFile)
		}
	}
	if a.Role != "" {
		v.oneOf(key+".role", a.Role, AgentRoles())
	}
	if a.Report != "" {
		v.oneOf(key+".report", a.Report, ReportKinds())
	}
	if a.PermissionMode != "" {
		v.oneOf(key+".permission_mode", a.PermissionMode, Modes())
	}
	if a.Placement != "" {
		v.oneOf(key+".placement", a.Placement, []string{"local", "remote", "any"})
	}
	if a.Color != "" && !ValidColor(a.Color) {
		v.add(key+".color", "must be one of %s or #rrggbb (got %q)", strings.Join(AgentColors(), ", "), a.Color)
	}
	for i, sk := range a.Skills {
		if sk != "*" && !agentName().MatchString(sk) {
			v.add(fmt.Sprintf("%s.skills[%d]", key, i), "invalid skill name %q: use lower-case letters, digits, '-' and '_'", sk)
		}
	}
	if a.Sandbox.Network != "" {
		v.oneOf(key+".sandbox.network", a.Sandbox.Network, []string{"on", "off"})
	}
	for i, d := range a.Sandbox.AllowedDomains {
		if strings.TrimSpace(d) == "" || strings.ContainsAny(d, " /\t") {
			v.add(fmt.Sprintf("%s.sandbox.allowed_domains[%d]", key, i), "must be a host name such as example.com or *.example.com (got %q)", d)
		}
	}
	v.unixSockets(key+".sandbox.allow_unix_sockets", a.Sandbox.AllowUnixSockets)
	if slices.Contains(BuiltinAgents(), name) || a.Disabled {
		return
	}
	if strings.TrimSpace(a.Description) == "" {
		v.add(key+".description", "must be set for a custom agent: it tells the Orchestrator when to use it")
	}
	if a.Prompt == "" && a.PromptFile == "" {
		v.add(key, "a custom agent needs prompt or prompt_file")
	}
}

func (v *validator) hooks(hooks map[string][]Hook) {
	events := HookEvents()
	for _, event := range sortedKeys(hooks) {
		key := "hooks." + event
		if !slices.Contains(events, event) {
			v.add(key, "unknown hook event%s", known(event, events))
		}
		for i, h := range hooks[event] {
			hk := key + "[" + strconv.Itoa(i) + "]"
			if strings.TrimSpace(h.Command) == "" {
				v.add(hk+".command", "must be set: the command to run (bash -c)")
			}
			v.notNegativeDuration(hk+".timeout", h.Timeout)
		}
	}
}

func (v *validator) web(w Web) {
	v.positiveDuration("web.timeout", w.Timeout)
	if w.MaxBytes <= 0 {
		v.add("web.max_bytes", "must be positive (got %d)", w.MaxBytes)
	}
	v.notNegativeDuration("web.cache_ttl", w.CacheTTL)
	v.notNegativeDuration("web.research_ttl.general", w.ResearchTTL.General)
	v.notNegativeDuration("web.research_ttl.docs", w.ResearchTTL.Docs)
	v.notNegativeDuration("web.research_ttl.security", w.ResearchTTL.Security)
	for i, h := range w.AllowHosts {
		k := fmt.Sprintf("web.allow_hosts[%d]", i)
		switch {
		case strings.TrimSpace(h) == "":
			v.add(k, "must not be empty")
		case strings.Contains(h, "://") || strings.ContainsAny(h, "/ \t"):
			v.add(k, "must be a host or host:port such as localhost:8080 (got %q)", h)
		}
	}
	for i, h := range w.DenyHosts {
		if d := strings.TrimPrefix(strings.TrimSpace(h), "*."); d == "" || strings.ContainsAny(d, "/: \t*") {
			v.add(fmt.Sprintf("web.deny_hosts[%d]", i), "must be a domain such as example.com or *.example.com (got %q)", h)
		}
	}
	s := w.Search
	if s.Kind != "" {
		v.oneOf("web.search.kind", s.Kind, SearchKinds())
	}
	if s.URL != "" {
		v.httpURL("web.search.url", s.URL, "http://localhost:8888")
	}
	v.envName("web.search.api_key_env", s.APIKeyEnv)
	switch s.Kind {
	case "searxng":
		if s.URL == "" {
			v.add("web.search.url", "must be set for searxng: the URL of the instance")
		}
	case "brave", "tavily":
		if s.APIKeyEnv == "" {
			v.add("web.search.api_key_env", "must be set for %s: the environment variable holding its key", s.Kind)
		}
	}
}

// known suggests a close name or lists the valid ones.
func known(name string, names []string) string {
	if s := closest(name, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(names) == 0 {
		return " (none are defined)"
	}
	return " (defined: " + strings.Join(names, ", ") + ")"
}

func unwrapPathError(err error) error {
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// mcpServerName is what a server name may hold: it becomes part of tool
// names, which providers restrict to these characters.
var mcpServerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func (v *validator) mcp(m MCP) {
	v.notNegativeDuration("mcp.connect_timeout", m.ConnectTimeout)
	for i, p := range m.DenyTools {
		if _, err := path.Match(p, ""); err != nil || !strings.HasPrefix(p, "mcp__") {
			v.add(fmt.Sprintf("mcp.deny_tools[%d]", i), "%q is not a pattern of MCP tool names (want mcp__SERVER__TOOL, * and ? allowed)", p)
		}
	}
	for _, name := range sortedKeys(m.Servers) {
		key := "mcp.servers." + name
		s := m.Servers[name]
		if !mcpServerName().MatchString(name) || strings.Contains(name, "__") {
			v.add(key, "a server name may hold only letters, digits, \"-\" and \"_\" (no \"__\"), since it becomes part of tool names mcp__NAME__TOOL")
		}
		switch s.Type {
		case "", "stdio", "http", "streamable-http", "sse":
		default:
			v.add(key+".type", "must be stdio, http or sse (got %q)", s.Type)
		}
		switch {
		case s.Command == "" && s.URL == "":
			v.add(key, "needs command (a stdio server) or url (an http or sse server)")
		case s.Command != "" && s.URL != "":
			v.add(key, "sets both command and url; a server is either a command (stdio) or a url (http, sse)")
		case s.Command != "" && s.Type != "" && s.Type != "stdio":
			v.add(key+".type", "is %q but the server has a command; use url for an http or sse server", s.Type)
		case s.URL != "" && s.Type == "stdio":
			v.add(key+".type", "is stdio but the server has a url; use command for a stdio server")
		}
		if s.URL != "" && !strings.Contains(s.URL, "${") {
			v.httpURL(key+".url", s.URL, "https://mcp.example.com/mcp")
		}
		if s.BearerTokenEnv != "" {
			v.envName(key+".bearer_token_env", s.BearerTokenEnv)
		}
		if s.OAuth != nil {
			if s.Command != "" {
				v.add(key+".oauth", "is for http servers; a stdio server (command) does not log in")
			}
			if s.OAuth.ClientSecret != "" && s.OAuth.ClientID == "" {
				v.add(key+".oauth.client_secret", "needs oauth.client_id")
			}
		}
		for _, h := range sortedKeys(s.Headers) {
			if !headerName().MatchString(h) {
				v.add(key+".headers."+h, "is not a valid HTTP header name")
			}
		}
		switch s.Sampling {
		case "", "ask", "allow", "deny":
		default:
			v.add(key+".sampling", "must be ask, allow or deny (got %q)", s.Sampling)
		}
		switch s.Startup {
		case "", "lazy", "eager":
		default:
			v.add(key+".startup", "must be lazy or eager (got %q)", s.Startup)
		}
		v.notNegativeDuration(key+".timeout", s.Timeout)
	}
}

func (v *validator) rateLimit(key string, r RateLimit) {
	notNegative(v, key+".requests_per_minute", r.RequestsPerMinute)
	notNegative(v, key+".tokens_per_minute", r.TokensPerMinute)
}

var hexColor = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#[0-9a-fA-F]{6}$`) })

// ValidColor reports whether c is one of AgentColors or #rrggbb.
func ValidColor(c string) bool {
	return slices.Contains(AgentColors(), strings.ToLower(c)) || hexColor().MatchString(c)
}

// quality checks the keys of the gates' lint, coverage, refactor and test
// confinement rules.
func (v *validator) quality(q Quality) {
	v.oneOf("quality.code_lint", q.CodeLint, CodeLintModes())
	notNegative(v, "quality.refactor_lines", q.RefactorLines)
	v.globs("quality.test_files", q.TestFiles)
	for _, k := range []struct{ key, val string }{{"quality.format", q.Format}, {"quality.coverage", q.Coverage}} {
		if k.val != "" && strings.TrimSpace(k.val) == "" {
			v.add(k.key, "must be a command or empty (got only blanks)")
		}
		if strings.ContainsAny(k.val, "\n\r") {
			v.add(k.key, "must be one command line (got a line break)")
		}
	}
}
