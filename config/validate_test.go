package config

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		want   []string
	}{
		{"mode", func(c *Config) { c.Mode = "write" }, []string{`mode: must be one of ask, plan, edit (got "write")`}},
		{"agent definition fields", func(c *Config) {
			c.Agents = map[string]Agent{"x": {Description: "d", Prompt: "p", Role: "boss", Report: "essay", PermissionMode: "yolo",
				Color: "ultraviolet", Skills: []string{"Bad Skill"}, Sandbox: AgentSandbox{Network: "maybe", AllowedDomains: []string{"http://x/y"}}}}
		}, []string{
			`agents.x.role: must be one of reviewer, tester, fixer, diagnostician, researcher, none (got "boss")`,
			`agents.x.report: must be one of search, research, code, review, test, docs, qa, init, generic (got "essay")`,
			`agents.x.permission_mode: must be one of ask, plan, edit (got "yolo")`,
			`agents.x.color: must be one of black, red, green, yellow, blue, magenta, cyan, white, orange, purple, pink, gray or #rrggbb (got "ultraviolet")`,
			`agents.x.skills[0]: invalid skill name "Bad Skill": use lower-case letters, digits, '-' and '_'`,
			`agents.x.sandbox.network: must be one of on, off (got "maybe")`,
			`agents.x.sandbox.allowed_domains[0]: must be a host name such as example.com or *.example.com (got "http://x/y")`,
		}},
		{"unix sockets", func(c *Config) {
			c.Permissions.Network.AllowUnixSockets = []string{"/var/run/docker.sock", "docker.sock", "/run/*"}
			c.Agents = map[string]Agent{"x": {Description: "d", Prompt: "p", Sandbox: AgentSandbox{AllowUnixSockets: []string{"/"}}}}
		}, []string{
			`agents.x.sandbox.allow_unix_sockets[0]: must be the absolute path of a unix socket such as /var/run/docker.sock (got "/")`,
			`permissions.network.allow_unix_sockets[1]: must be the absolute path of a unix socket such as /var/run/docker.sock (got "docker.sock")`,
			`permissions.network.allow_unix_sockets[2]: must be the absolute path of a unix socket such as /var/run/docker.sock (got "/run/*")`,
		}},
		{"max_turns", func(c *Config) { c.MaxTurns = 0 }, []string{`max_turns: must be positive (got 0)`}},
		{"no provider", func(c *Config) { c.Provider = "" }, []string{`provider: must name a provider (one of providers: openai)`}},
		{"unknown provider", func(c *Config) { c.Provider = "opnai" }, []string{`provider: unknown provider "opnai" (did you mean "openai"?)`}},
		{"provider fields", func(c *Config) {
			c.Providers["local"] = Provider{BaseURL: "localhost:11434", APIKeyEnv: "MY KEY", Timeout: 0, MaxRetries: -1,
				Headers: map[string]string{"Bad Header": "x", "X-Ok": "a\nb"}}
		}, []string{
			`providers.local.base_url: must be an http or https URL such as http://localhost:11434/v1 (got "localhost:11434")`,
			`providers.local.api_key_env: must be an environment variable name (got "MY KEY")`,
			`providers.local.timeout: must be a positive duration (got 0s)`,
			`providers.local.max_retries: must not be negative (got -1)`,
			`providers.local.headers.Bad Header: not a valid HTTP header name`,
			`providers.local.headers.X-Ok: a header value must not contain line breaks`,
		}},
		{"missing base_url", func(c *Config) { c.Providers["local"] = Provider{Timeout: time.Second} },
			[]string{`providers.local.base_url: must be set: the URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1`}},
		{"a key where its variable goes", func(c *Config) {
			p := c.Providers["openai"]
			p.APIKeyEnv = "sk-proj-abc123"
			c.Providers["openai"] = p
		}, []string{`providers.openai.api_key_env: looks like a secret: api_key_env names the environment variable that holds the key (e.g. OPENAI_API_KEY); keys never go in config files`}},
		{"models", func(c *Config) { c.Models = Models{Main: " "} }, []string{
			`models.main: must be set: a model id, e.g. gpt-4o`,
			`models.small: must be set: a model id, e.g. gpt-4o-mini`,
		}},
		{"model_info", func(c *Config) {
			c.ModelInfo["m"] = ModelInfo{Provider: "nowhere", ContextWindow: 100, MaxOutput: 200, Price: Price{Input: -1}}
		}, []string{
			`model_info.m.provider: unknown provider "nowhere" (defined: openai)`,
			`model_info.m.max_output: must not exceed context_window (200 > 100)`,
			`model_info.m.price.input: must not be negative (got -1)`,
		}},
		{"rate limits", func(c *Config) {
			p := c.Providers["openai"]
			p.RateLimit = RateLimit{RequestsPerMinute: -1}
			c.Providers["openai"] = p
			c.ModelInfo["m"] = ModelInfo{ContextWindow: 100, RateLimit: RateLimit{TokensPerMinute: -5}}
		}, []string{
			`providers.openai.rate_limit.requests_per_minute: must not be negative (got -1)`,
			`model_info.m.rate_limit.tokens_per_minute: must not be negative (got -5)`,
		}},
		{"model_info window", func(c *Config) { c.ModelInfo["m"] = ModelInfo{} }, []string{`model_info.m.context_window: must be positive (got 0)`}},
		{"agent name", func(c *Config) { c.Agents = map[string]Agent{"Bad Name": {Description: "d", Prompt: "p"}} },
			[]string{`agents.Bad Name: invalid agent name: use lower-case letters, digits, '-' and '_', starting with a letter, at most 41 characters`}},
		{"agent tools", func(c *Config) {
			c.Agents = map[string]Agent{"code": {Tools: []string{"Grep", ""}, DisallowedTools: []string{"Write File"}}}
		}, []string{
			`agents.code.tools[1]: must not be empty`,
			`agents.code.disallowed_tools[0]: a tool name must not contain spaces (got "Write File")`,
		}},
		{"agent limits", func(c *Config) {
			c.Agents = map[string]Agent{"code": {Timeout: 5 * time.Minute, MaxTimeout: 2 * time.Minute, MaxTurns: -1, MaxTokens: -5}}
		}, []string{
			`agents.code.timeout: must not exceed max_timeout (5m0s > 2m0s)`,
			`agents.code.max_turns: must not be negative (got -1)`,
			`agents.code.max_tokens: must not be negative (got -5)`,
		}},
		{"agent negative timeout", func(c *Config) { c.Agents = map[string]Agent{"qa": {Timeout: -time.Second}} },
			[]string{`agents.qa.timeout: must not be negative (got -1s)`}},
		{"custom agent needs a description and a prompt", func(c *Config) { c.Agents = map[string]Agent{"helper": {Tools: []string{"*"}}} },
			[]string{
				`agents.helper.description: must be set for a custom agent: it tells the Orchestrator when to use it`,
				`agents.helper: a custom agent needs prompt or prompt_file`,
			}},
		{"prompt and prompt_file", func(c *Config) {
			c.Agents = map[string]Agent{"helper": {Description: "d", Prompt: "p", PromptFile: "/nonexistent/p.md"}}
		}, []string{
			`agents.helper: set prompt or prompt_file, not both`,
			`agents.helper.prompt_file: cannot read /nonexistent/p.md: no such file or directory`,
		}},
		{"a disabled custom agent needs nothing", func(c *Config) { c.Agents = map[string]Agent{"old": {Disabled: true}} }, nil},
		{"overriding a built-in needs nothing", func(c *Config) { c.Agents = map[string]Agent{"review": {Model: "small"}} }, nil},
		{"supervision", func(c *Config) { c.Supervision = Supervision{MaxRestarts: -1} }, []string{
			`supervision.max_restarts: must not be negative (got -1)`,
			`supervision.window: must be a positive duration (got 0s)`,
		}},
		{"quality", func(c *Config) {
			c.Quality.RiskPaths = []string{"**/[auth"}
			c.Quality.PublicAPI = []string{""}
			c.Quality.MaxFixRounds = -1
			c.Quality.CheckTimeout = 0
		}, []string{
			`quality.risk_paths[0]: invalid glob "**/[auth"`,
			`quality.public_api[0]: must not be empty`,
			`quality.max_fix_rounds: must not be negative (got -1)`,
			`quality.check_timeout: must be a positive duration (got 0s)`,
		}},
		{"quality gates: lint, coverage, refactors, test files", func(c *Config) {
			c.Quality.CodeLint = "sometimes"
			c.Quality.RefactorLines = -5
			c.Quality.TestFiles = []string{"e2e/[x"}
			c.Quality.Format = "  "
			c.Quality.Coverage = "go test -cover\nrm -rf /"
		}, []string{
			`quality.code_lint: must be one of auto, off (got "sometimes")`,
			`quality.refactor_lines: must not be negative (got -5)`,
			`quality.test_files[0]: invalid glob "e2e/[x"`,
			`quality.format: must be a command or empty (got only blanks)`,
			`quality.coverage: must be one command line (got a line break)`,
		}},
		{"permissions", func(c *Config) {
			c.Permissions = Permissions{AllowedCommands: []string{" "}, ForbiddenCommands: []string{""}, AdditionalDirs: []string{"rel/dir"}}
		}, []string{
			`permissions.allowed_commands[0]: must not be empty`,
			`permissions.forbidden_commands[0]: must not be empty`,
			`permissions.additional_dirs[0]: must be an absolute path (got "rel/dir")`,
		}},
		{"hooks", func(c *Config) {
			c.Hooks = map[string][]Hook{
				"PreToolUSE":  {{Command: "x"}},
				"PostToolUse": {{Command: "ok"}, {Command: " ", Timeout: -time.Second}},
				"Whenever":    {{Command: "x"}},
			}
		}, []string{
			`hooks.PostToolUse[1].command: must be set: the command to run (bash -c)`,
			`hooks.PostToolUse[1].timeout: must not be negative (got -1s)`,
			`hooks.PreToolUSE: unknown hook event (did you mean "PreToolUse"?)`,
			`hooks.Whenever: unknown hook event (defined: PreToolUse, PostToolUse, UserPromptSubmit, SubagentStart, SubagentStop, Stop, PreCompact)`,
		}},
		{"compact_at high", func(c *Config) { c.Context.CompactAt = 1 }, []string{`context.compact_at: must be between 0 and 1, exclusive (got 1)`}},
		{"compact_at zero", func(c *Config) { c.Context.CompactAt = 0 }, []string{`context.compact_at: must be between 0 and 1, exclusive (got 0)`}},
		{"keep_recent", func(c *Config) { c.Context.KeepRecent = -1 }, []string{`context.keep_recent: must not be negative (got -1)`}},
		{"web limits", func(c *Config) {
			c.Web.Timeout, c.Web.MaxBytes, c.Web.CacheTTL = 0, 0, -time.Second
			c.Web.ResearchTTL = ResearchTTL{General: -1, Docs: -1, Security: -1}
		}, []string{
			`web.timeout: must be a positive duration (got 0s)`,
			`web.max_bytes: must be positive (got 0)`,
			`web.cache_ttl: must not be negative (got -1s)`,
			`web.research_ttl.general: must not be negative (got -1ns)`,
			`web.research_ttl.docs: must not be negative (got -1ns)`,
			`web.research_ttl.security: must not be negative (got -1ns)`,
		}},
		{"allow_hosts", func(c *Config) { c.Web.AllowHosts = []string{"localhost:8080", "http://127.0.0.1", ""} }, []string{
			`web.allow_hosts[1]: must be a host or host:port such as localhost:8080 (got "http://127.0.0.1")`,
			`web.allow_hosts[2]: must not be empty`,
		}},
		{"search kind", func(c *Config) { c.Web.Search = Search{Kind: "google"} },
			[]string{`web.search.kind: must be one of searxng, brave, tavily (got "google")`}},
		{"searxng needs a url", func(c *Config) { c.Web.Search = Search{Kind: "searxng"} },
			[]string{`web.search.url: must be set for searxng: the URL of the instance`}},
		{"brave needs a key", func(c *Config) { c.Web.Search = Search{Kind: "brave"} },
			[]string{`web.search.api_key_env: must be set for brave: the environment variable holding its key`}},
		{"search url", func(c *Config) { c.Web.Search = Search{Kind: "searxng", URL: "ftp://x"} },
			[]string{`web.search.url: must be an http or https URL such as http://localhost:8888 (got "ftp://x")`}},
		{"valid search", func(c *Config) { c.Web.Search = Search{Kind: "tavily", APIKeyEnv: "TAVILY_API_KEY"} }, nil},
		{"log level", func(c *Config) { c.Log.Level = "verbose" }, []string{`log.level: must be one of debug, info, warn, error (got "verbose")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(c)
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if diff := cmp.Diff(tt.want, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCollectsEveryProblem(t *testing.T) {
	c := Default()
	c.Mode = "x"
	c.MaxTurns = -1
	c.Log.Level = "loud"
	got := problems(t, c.Validate())
	if len(got) != 3 {
		t.Errorf("problems = %q, want all three", got)
	}
}

func TestValidPromptFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.md")
	writeFile(t, file, "You help.")
	c := Default()
	c.Agents = map[string]Agent{"helper": {Description: "d", PromptFile: file}}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	c.Agents = map[string]Agent{"helper": {Description: "d", PromptFile: dir}}
	want := []string{"agents.helper.prompt_file: " + dir + " is a directory"}
	if diff := cmp.Diff(want, problems(t, c.Validate())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Source: "odin.yaml", Key: "mode", Msg: "bad"}, "odin.yaml: mode: bad"},
		{Problem{Source: "odin.yaml", Line: 3, Msg: "yaml: bad"}, "odin.yaml:3: yaml: bad"},
		{Problem{Key: "mode", Msg: "bad"}, "mode: bad"},
		{Problem{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}
