package config

import "time"

// Config is the whole of odin.yaml.
type Config struct {
	// Provider is the name (a key of Providers) of the provider used for
	// models that do not name one. Default "openai".
	Provider string `mapstructure:"provider" yaml:"provider"`
	// Providers are OpenAI-compatible endpoints by name.
	Providers map[string]Provider `mapstructure:"providers" yaml:"providers"`
	// Models names the models Odin uses by role.
	Models Models `mapstructure:"models" yaml:"models"`
	// ModelInfo describes models by id: provider, window, prices.
	ModelInfo map[string]ModelInfo `mapstructure:"model_info" yaml:"model_info"`
	// Mode is the default mode of a message: ask, plan or edit. Default edit.
	Mode string `mapstructure:"mode" yaml:"mode"`
	// MaxTurns bounds the Orchestrator's model calls for one message.
	// Default 50.
	MaxTurns int `mapstructure:"max_turns" yaml:"max_turns"`
	// Agents overrides built-in specialists and declares custom ones, by name.
	Agents map[string]Agent `mapstructure:"agents" yaml:"agents"`
	// Supervision bounds restarts of crashing specialists.
	Supervision Supervision `mapstructure:"supervision" yaml:"supervision"`
	// Budget bounds what gates, turns and the session may spend.
	Budget Budgets `mapstructure:"budget" yaml:"budget"`
	// Runaway configures the detection of specialists making no progress.
	Runaway Runaway `mapstructure:"runaway" yaml:"runaway"`
	// Quality configures the quality gates.
	Quality Quality `mapstructure:"quality" yaml:"quality"`
	// Permissions widen or narrow what tools may do.
	Permissions Permissions `mapstructure:"permissions" yaml:"permissions"`
	// Hooks are user commands run on events, by event name (PreToolUse,
	// PostToolUse, UserPromptSubmit, SubagentStart, SubagentStop, Stop,
	// PreCompact).
	Hooks map[string][]Hook `mapstructure:"hooks" yaml:"hooks"`
	// Context configures history compaction.
	Context Context `mapstructure:"context" yaml:"context"`
	// Web configures WebFetch and web search.
	Web Web `mapstructure:"web" yaml:"web"`
	// Log configures Odin's log file.
	Log Log `mapstructure:"log" yaml:"log"`
	// Store configures the session database.
	Store Store `mapstructure:"store" yaml:"store"`
	// MCP configures Model Context Protocol servers, whose tools agents
	// see as mcp__SERVER__TOOL. Servers from Claude Code's .mcp.json (the
	// project's) and ~/.claude.json (the user's "mcpServers") are read as
	// well; an entry here wins over one of the same name there.
	MCP MCP `mapstructure:"mcp" yaml:"mcp"`

	// Env looks up environment variables for APIKey and ResolveModel. It is
	// not a key of odin.yaml: Load sets it to LoadOptions.LookupEnv; nil
	// means os.LookupEnv. Compare Configs with cmpopts.IgnoreFields(Config{},
	// "Env"), since functions never compare equal.
	Env EnvFunc `mapstructure:"-" yaml:"-"`
}

// Provider is an OpenAI-compatible endpoint.
type Provider struct {
	// BaseURL of the API, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1. Required. For the built-in provider named
	// "openai" the default is https://api.openai.com/v1, replaced by
	// $OPENAI_BASE_URL when that is set; a base_url written in a config
	// file, ODIN_PROVIDERS_OPENAI_BASE_URL or a flag wins over both.
	BaseURL string `mapstructure:"base_url" yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the key. Default
	// OPENAI_API_KEY for the built-in "openai" provider and none for the
	// others, so a key is never sent where nobody asked for it. Keys are
	// never written in config files. Without a key a provider is usable only
	// when its base_url is not api.openai.com (local servers need none).
	APIKeyEnv string `mapstructure:"api_key_env" yaml:"api_key_env"`
	// Timeout bounds one request, streaming included. Default 5m (for every
	// provider).
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// IdleTimeout bounds the provider's silence within one request: the
	// wait for the first byte and the gap between two bytes of the stream.
	// A stalled stream fails (and is retried) after it rather than after
	// timeout. Default 90s (for every provider; 0 also means 90s).
	IdleTimeout time.Duration `mapstructure:"idle_timeout" yaml:"idle_timeout"`
	// IdleConnTimeout is how long a connection to the provider is kept
	// open without a request, for the next one. Default 30s (0 also means
	// 30s): odin serve's sessions share the connections, and a burst of
	// them leaves none open for longer than this.
	IdleConnTimeout time.Duration `mapstructure:"idle_conn_timeout" yaml:"idle_conn_timeout"`
	// Budget bounds one model call as a whole: every attempt and every wait
	// between retries. When it runs out the call fails without another
	// retry. Default 15m (for every provider; 0 also means 15m).
	Budget time.Duration `mapstructure:"budget" yaml:"budget"`
	// MaxRetries is how many times a failed request (429, 5xx, network) is
	// retried. Default 4 (for every provider); 0 disables retries.
	MaxRetries int `mapstructure:"max_retries" yaml:"max_retries"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `mapstructure:"headers" yaml:"headers"`
	// RateLimit is the provider's quota, shared by every agent of every
	// session in the process: calls queue for it instead of drawing 429s.
	// Unset (the default) means no limit of Odin's own; a 429 with
	// Retry-After still pauses every call to the provider.
	RateLimit RateLimit `mapstructure:"rate_limit" yaml:"rate_limit"`
}

// RateLimit is a request and token quota per minute; 0 means no limit.
type RateLimit struct {
	// RequestsPerMinute spaces requests evenly: 600 lets one go every
	// 100ms.
	RequestsPerMinute int `mapstructure:"requests_per_minute" yaml:"requests_per_minute"`
	// TokensPerMinute bounds the prompt tokens (estimated) plus the
	// completion cap of the requests sent in any minute.
	TokensPerMinute int `mapstructure:"tokens_per_minute" yaml:"tokens_per_minute"`
}

// IsZero reports whether no limit is set.
func (r RateLimit) IsZero() bool { return r.RequestsPerMinute == 0 && r.TokensPerMinute == 0 }

// Models names the models by role.
type Models struct {
	// Main is the model of the Orchestrator, Code and Review. Default gpt-4o.
	Main string `mapstructure:"main" yaml:"main"`
	// Small is the model of the other specialists, summaries, web pages and
	// compaction. Default gpt-4o-mini.
	Small string `mapstructure:"small" yaml:"small"`
}

// ModelInfo describes one model.
type ModelInfo struct {
	// Provider serving the model (a key of providers); default: the
	// top-level provider.
	Provider string `mapstructure:"provider" yaml:"provider"`
	// ContextWindow in tokens. Default 128000.
	ContextWindow int `mapstructure:"context_window" yaml:"context_window"`
	// MaxOutput caps completion tokens per call; 0 lets the provider decide.
	MaxOutput int `mapstructure:"max_output" yaml:"max_output"`
	// Price per million tokens, in US dollars.
	Price Price `mapstructure:"price" yaml:"price"`
	// RateLimit is this model's own quota when it differs from its
	// provider's (providers.NAME.rate_limit): its calls draw from a bucket
	// of their own, shared by every agent, instead of the provider's.
	RateLimit RateLimit `mapstructure:"rate_limit" yaml:"rate_limit"`
	// Images says whether the model takes images (attached with odin run
	// --image or an image path in the REPL; MCP tools' images). Unset: the
	// model catalogue decides, and a model it does not know is assumed to
	// take them. A model that does not gets an image's label instead, and
	// an attachment is refused before anything is sent.
	Images *bool `mapstructure:"images" yaml:"images"`
}

// Price is a model's price per million tokens.
type Price struct {
	Input       float64 `mapstructure:"input" yaml:"input"`
	CachedInput float64 `mapstructure:"cached_input" yaml:"cached_input"`
	Output      float64 `mapstructure:"output" yaml:"output"`
}

// Agent overrides a built-in specialist or declares a custom one.
type Agent struct {
	// Description says when to use the agent; the Orchestrator's model
	// sees it. Required for custom agents.
	Description string `mapstructure:"description" yaml:"description"`
	// Prompt is the agent's system prompt; PromptFile names a file holding
	// it (relative to the directory of the config file that sets it; Load
	// makes it absolute). Custom agents need exactly one of them.
	Prompt     string `mapstructure:"prompt" yaml:"prompt"`
	PromptFile string `mapstructure:"prompt_file" yaml:"prompt_file"`
	// Tools is the allow list of tool names; "*" allows every tool.
	Tools []string `mapstructure:"tools" yaml:"tools"`
	// DisallowedTools are never given to the agent.
	DisallowedTools []string `mapstructure:"disallowed_tools" yaml:"disallowed_tools"`
	// Model is "main", "small" or an explicit model id; empty keeps the
	// agent's built-in role (main for Code and Review, small otherwise).
	Model string `mapstructure:"model" yaml:"model"`
	// Timeout is the agent's default deadline; MaxTimeout caps what a
	// delegation may ask for. Zero keeps the built-in agent's value; when
	// both are set, timeout must not exceed max_timeout.
	Timeout    time.Duration `mapstructure:"timeout" yaml:"timeout"`
	MaxTimeout time.Duration `mapstructure:"max_timeout" yaml:"max_timeout"`
	// MaxTurns bounds the agent's model calls per task.
	MaxTurns int `mapstructure:"max_turns" yaml:"max_turns"`
	// MaxTokens bounds the tokens (prompt + completion) the agent may
	// spend per task.
	MaxTokens int64 `mapstructure:"max_tokens" yaml:"max_tokens"`
	// Disabled removes a built-in agent from the roster.
	Disabled bool `mapstructure:"disabled" yaml:"disabled"`
	// Role is the agent's part in the quality-gate pipeline: reviewer
	// (reviews a change set), tester (reruns the tests), fixer (fixes
	// what a gate found), diagnostician (diagnoses failing QA checks),
	// researcher (answers the other agents' ResearchRequest), or none. The built-ins review, test, code and qa hold these roles; an
	// agent that declares one takes it over from the built-in (with a
	// warning), and two user agents declaring one role is an error. "none"
	// takes a built-in's role away. A role fixes the Report schema.
	Role string `mapstructure:"role" yaml:"role"`
	// Report names the agent's Report schema: search, research, code,
	// review, test, docs, qa, init or generic (summary + details). Empty
	// keeps the built-in's, follows the role, or is generic.
	Report string `mapstructure:"report" yaml:"report"`
	// PermissionMode caps the mode the agent works in: ask or plan make
	// it read-only even when the turn is in edit mode; edit (or empty)
	// leaves the turn's mode.
	PermissionMode string `mapstructure:"permission_mode" yaml:"permission_mode"`
	// CriticalReminder is appended to every model request of the agent,
	// as the last message, so the model sees it however long the task.
	CriticalReminder string `mapstructure:"critical_reminder" yaml:"critical_reminder"`
	// Color is how the REPL shows the agent's lines: a colour name
	// (black, red, green, yellow, blue, magenta, cyan, white, orange,
	// purple, pink, gray) or #rrggbb.
	Color string `mapstructure:"color" yaml:"color"`
	// Skills are the names of the skills (folders holding a SKILL.md in
	// .odin/skills or the user's config dir's skills) the agent is offered;
	// "*" offers all. The agent sees each skill's name and description
	// and loads one with the Skill tool.
	Skills []string `mapstructure:"skills" yaml:"skills"`
	// Sandbox adjusts the sandbox of the agent's commands.
	Sandbox AgentSandbox `mapstructure:"sandbox" yaml:"sandbox"`
	// Budget bounds what one run of the agent may spend; a delegation may
	// only lower it.
	Budget Budget `mapstructure:"budget" yaml:"budget"`
	// Isolation "worktree" runs the agent in its own git worktree of the
	// project; its changes come back as a patch merged into the project
	// (docs/workspaces.md). Empty or "none" works in the project.
	Isolation string `mapstructure:"isolation" yaml:"isolation"`
	// Placement is where the agent's tasks run on a cluster (see
	// docs/remote-specialists.md): local (the default: the session's
	// node), remote (a worker's specialist host, in a worktree of the
	// session's commit and uncommitted changes; here when no worker can
	// take it) or any (a worker when one is up). Read-only agents may run
	// remotely, and writers with isolation "worktree", whose patch comes
	// back and is applied on the session's node.
	Placement string `mapstructure:"placement" yaml:"placement"`
}

// AgentSandbox is one agent's sandbox profile.
type AgentSandbox struct {
	// Network is "on" (the default: the allowed domains are reachable
	// through Odin's proxy) or "off" (nothing, not even
	// permissions.network.allowed_domains).
	Network string `mapstructure:"network" yaml:"network"`
	// AllowedDomains are added to permissions.network.allowed_domains for
	// this agent's commands.
	AllowedDomains []string `mapstructure:"allowed_domains" yaml:"allowed_domains"`
	// AllowUnixSockets are added to
	// permissions.network.allow_unix_sockets for this agent's commands.
	AllowUnixSockets []string `mapstructure:"allow_unix_sockets" yaml:"allow_unix_sockets"`
}

// Supervision bounds restarts of crashing specialists.
type Supervision struct {
	// MaxRestarts within Window before a specialist is reported failed.
	// Default 2.
	MaxRestarts int `mapstructure:"max_restarts" yaml:"max_restarts"`
	// Window is the period over which restarts are counted. Default 1m.
	Window time.Duration `mapstructure:"window" yaml:"window"`
}

// Quality configures the quality gates.
type Quality struct {
	// RiskPaths are doublestar globs (matched against paths relative to the
	// root, case-insensitively) whose change forces review and QA.
	RiskPaths []string `mapstructure:"risk_paths" yaml:"risk_paths"`
	// PublicAPI are globs of files whose change counts as a public API change
	// for languages other than Go (Go is analysed exactly).
	PublicAPI []string `mapstructure:"public_api" yaml:"public_api"`
	// MaxFixRounds bounds the review/test → fix loops. Default 2.
	MaxFixRounds int `mapstructure:"max_fix_rounds" yaml:"max_fix_rounds"`
	// Build, Lint and Test are the shell commands QA runs. When all are
	// empty, the Commands section of ODIN.md is used, else they are
	// detected from the project (go.mod, package.json, ...).
	Build string `mapstructure:"build" yaml:"build"`
	Lint  string `mapstructure:"lint" yaml:"lint"`
	Test  string `mapstructure:"test" yaml:"test"`
	// CheckTimeout bounds each QA check. Default 5m.
	CheckTimeout time.Duration `mapstructure:"check_timeout" yaml:"check_timeout"`
	// CodeLint is whether the Code specialist formats and lints the files
	// it changed before it reports: "auto" (the default: quality.format and
	// quality.lint, else the ODIN.md Commands, else detection — gofmt and
	// go vet for Go, ruff, eslint, cargo clippy) or "off".
	CodeLint string `mapstructure:"code_lint" yaml:"code_lint"`
	// Format is the formatter Code runs on the files it changed ("gofmt
	// -w", "ruff format"); the changed files are appended, or replace
	// {files} where it appears. Empty detects one.
	Format string `mapstructure:"format" yaml:"format"`
	// Coverage is the command that measures test coverage for QA, run
	// before and after the change; {packages} is replaced by the changed
	// packages (Go: "go test -cover {packages}"). Empty detects it (Go
	// only); "off" turns the measurement off.
	Coverage string `mapstructure:"coverage" yaml:"coverage"`
	// RefactorLines is the size, in changed lines (added plus removed),
	// from which a change counts as a significant refactor and makes
	// review and QA mandatory, like a multi-file change. Default 300; 0
	// turns the size rule off (renames and moves still count).
	RefactorLines int `mapstructure:"refactor_lines" yaml:"refactor_lines"`
	// TestFiles are further doublestar globs of files the Test specialist
	// may write, beside the built-in ones (*_test.*, test_*.*, *.test.*,
	// *.spec.*, tests/**, testdata/**...).
	TestFiles []string `mapstructure:"test_files" yaml:"test_files"`
}

// CodeLintModes are the valid quality.code_lint values.
func CodeLintModes() []string { return []string{"auto", "off"} }

// Permissions widen or narrow what tools may do. Project-level permissions
// that widen access are honoured only once the project is trusted.
type Permissions struct {
	// AllowedCommands are command patterns ("go test *") that run without
	// asking.
	AllowedCommands []string `mapstructure:"allowed_commands" yaml:"allowed_commands"`
	// ForbiddenCommands are command patterns ("git push*") that never run.
	ForbiddenCommands []string `mapstructure:"forbidden_commands" yaml:"forbidden_commands"`
	// AdditionalDirs are directories outside the root that tools may use.
	// Relative entries are taken against the directory of the config file
	// that sets them; "~/" is the home directory.
	AdditionalDirs []string `mapstructure:"additional_dirs" yaml:"additional_dirs"`
	// Sandbox is how every command Odin starts (ExecuteCommand, QA checks,
	// hooks, git) is confined: auto (bubblewrap, else Landlock, else
	// unconfined with a warning), bubblewrap (refuse without it), landlock
	// (force the fallback), required (refuse when neither works) or off.
	// true means auto and false off. Default auto; `odin doctor` shows what
	// is in force.
	Sandbox SandboxMode `mapstructure:"sandbox" yaml:"sandbox"`
	// SandboxLimits bound what one sandboxed command may take of the
	// machine (processes, memory, file size, CPU time), so that a fork
	// bomb, a memory hog or a disk filler fails alone instead of taking
	// Odin and the machine down. A project's setting waits for `odin
	// trust`.
	SandboxLimits SandboxLimits `mapstructure:"sandbox_limits" yaml:"sandbox_limits"`
	// Network is what sandboxed commands may reach; by default nothing.
	Network Network `mapstructure:"network" yaml:"network"`
	// Env are further environment variable names (NAME or PREFIX_*)
	// passed to commands. Secret-looking names (*_KEY, *_TOKEN, *SECRET*,
	// *PASSWORD*...) and the providers' api_key_env are never passed.
	Env []string `mapstructure:"env" yaml:"env"`
	// DenyRead are files whose contents the model never sees: the file
	// tools refuse them and sandboxed commands (bubblewrap) find them
	// hidden. gitignore syntax: "~/x" in the home directory, "/x" an
	// absolute path, "./x" at the project root, "x" anywhere beneath the
	// project root. They add to the defaults (~/.ssh, ~/.aws, ~/.kube,
	// shell histories, .env and .env.* but not .env.example, .env.sample
	// or .env.template...; `odin doctor` lists them); a "!" pattern lifts
	// an earlier one ("!.env" makes .env readable). Lists from the user
	// file, ODIN_PERMISSIONS_DENY_READ and flags add up; a project's
	// odin.yaml may add patterns but never lift one.
	DenyRead []string `mapstructure:"deny_read" yaml:"deny_read"`
	// ProjectDenyRead are the project file's additions to DenyRead, which
	// then holds the user's patterns only. Not a key: Load fills it.
	ProjectDenyRead []string `mapstructure:"-" yaml:"-"`
}

// SandboxMode is a value of permissions.sandbox.
type SandboxMode string

// SandboxModes are the valid permissions.sandbox values.
func SandboxModes() []string { return []string{"auto", "bubblewrap", "landlock", "required", "off"} }

// Network lists the hosts sandboxed commands may reach through Odin's
// proxy: "example.com" matches that host, "*.example.com" its subdomains.
type Network struct {
	// AllowedDomains apply to every agent's commands (e.g.
	// proxy.golang.org for go mod download, registry.npmjs.org for npm).
	AllowedDomains []string `mapstructure:"allowed_domains" yaml:"allowed_domains"`
	// Agents adds domains for one agent's commands, by agent name
	// ("test", "qa", "user" for odin tool, "hooks" for hooks).
	Agents map[string]AgentNetwork `mapstructure:"agents" yaml:"agents"`
	// AllowUnixSockets are pathname unix sockets (absolute paths, "~/" is
	// the home directory) commands may connect to, e.g.
	// /var/run/docker.sock; by default none: the sandbox refuses unix
	// sockets, which reach servers outside it (tmux, the session bus,
	// docker, gpg-agent). Any entry lets those commands open unix sockets
	// at all: in bubblewrap they still see only the listed ones of /run,
	// /var/run and $XDG_RUNTIME_DIR, but every socket elsewhere; under
	// Landlock every pathname socket. A project's odin.yaml setting waits
	// for `odin trust`.
	AllowUnixSockets []string `mapstructure:"allow_unix_sockets" yaml:"allow_unix_sockets"`
}

// AgentNetwork is one agent's addition to the network allow list.
type AgentNetwork struct {
	// AllowedDomains are added to permissions.network.allowed_domains for
	// this agent's commands.
	AllowedDomains []string `mapstructure:"allowed_domains" yaml:"allowed_domains"`
}

// AgentDomains returns the per-agent lists by agent name.
func (n Network) AgentDomains() map[string][]string {
	out := map[string][]string{}
	for name, a := range n.Agents {
		out[name] = a.AllowedDomains
	}
	return out
}

// Hook is a command run on an event.
type Hook struct {
	// Matcher selects tools or agents by name: empty or "*" matches all; a
	// "|"-separated list matches any of the names.
	Matcher string `mapstructure:"matcher" yaml:"matcher"`
	// Command is run with bash -c; the event arrives as JSON on stdin.
	Command string `mapstructure:"command" yaml:"command"`
	// Timeout of the command. Default (and when 0) 30s.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`

	// PluginRoot is set on a plugin's hooks (not a key of odin.yaml): the
	// hook gets it as $CLAUDE_PLUGIN_ROOT, as under Claude Code.
	PluginRoot string `mapstructure:"-" yaml:"-"`
	// ToolNames renames tool_name in the event this hook receives (Odin's
	// name to the one the hook was written for: ExecuteCommand to Bash
	// for a Claude Code plugin's hook). Not a key of odin.yaml.
	ToolNames map[string]string `mapstructure:"-" yaml:"-"`
}

// Context configures history compaction.
type Context struct {
	// CompactAt is the fraction of the model's context window at which old
	// history is summarised. Default 0.8.
	CompactAt float64 `mapstructure:"compact_at" yaml:"compact_at"`
	// KeepRecent is how many recent messages survive compaction verbatim.
	// Default 6.
	KeepRecent int `mapstructure:"keep_recent" yaml:"keep_recent"`
	// MaxToolArgument is the largest arguments of one tool call, in bytes,
	// that Odin accepts from a model. Longer arguments are discarded as
	// they stream in and the call is answered with an error asking the
	// model to write in parts. Default 16777216 (16 MiB); the write tools
	// take at most 10 MiB of content anyway.
	// Values above 16 MiB only move the refusal to the tool, whose own
	// input limit is 16 MiB.
	MaxToolArgument int64 `mapstructure:"max_tool_argument" yaml:"max_tool_argument"`
}

// Web configures WebFetch and web search.
type Web struct {
	// Timeout of one fetch. Default 30s.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// MaxBytes caps a response body. Default 5 MiB.
	MaxBytes int64 `mapstructure:"max_bytes" yaml:"max_bytes"`
	// AllowHosts may be fetched even though they resolve to private,
	// loopback or link-local addresses ("localhost:8080", "127.0.0.1").
	AllowHosts []string `mapstructure:"allow_hosts" yaml:"allow_hosts"`
	// DenyHosts are never fetched, by WebFetch or the browser: a domain
	// ("example.com" also denies its subdomains; "*.example.com" the same).
	// Every layer's list adds up: a project adds, never lifts one.
	DenyHosts []string `mapstructure:"deny_hosts" yaml:"deny_hosts"`
	// CacheTTL is how long WebFetch results are cached. Default 15m.
	CacheTTL time.Duration `mapstructure:"cache_ttl" yaml:"cache_ttl"`
	// ResearchTTL are the Research agent's cache lifetimes by source kind.
	ResearchTTL ResearchTTL `mapstructure:"research_ttl" yaml:"research_ttl"`
	// Search configures a web search backend; without one, the Research
	// agent works from URLs it is given or knows.
	Search Search `mapstructure:"search" yaml:"search"`
	// Browser configures the WebBrowser tool (docs/browser.md).
	Browser Browser `mapstructure:"browser" yaml:"browser"`
}

// Browser configures WebBrowser, the headless Chromium an agent gets when
// its tools name it. Every request the page makes passes Odin's address
// policy (that of WebFetch, with allow_hosts): public hosts yes, private
// and loopback addresses no, except the loopback ports allowed here.
type Browser struct {
	// Chromium is the browser's program. Default: chromium, then
	// chromium-browser, google-chrome on PATH.
	Chromium string `mapstructure:"chromium" yaml:"chromium"`
	// AllowLoopback lets the page reach every port of localhost,
	// 127.0.0.1 and [::1] (the project's dev servers). Default false.
	AllowLoopback bool `mapstructure:"allow_loopback" yaml:"allow_loopback"`
	// LoopbackPorts are the loopback ports the page may reach when
	// AllowLoopback is off (e.g. [3000, 8080]).
	LoopbackPorts []int `mapstructure:"loopback_ports" yaml:"loopback_ports"`
}

// ResearchTTL are cache lifetimes by kind of source.
type ResearchTTL struct {
	General  time.Duration `mapstructure:"general" yaml:"general"`   // default 24h
	Docs     time.Duration `mapstructure:"docs" yaml:"docs"`         // default 168h
	Security time.Duration `mapstructure:"security" yaml:"security"` // default 1h
}

// Search is a web search backend.
type Search struct {
	// Kind is searxng, brave or tavily; empty disables search.
	Kind string `mapstructure:"kind" yaml:"kind"`
	// URL of the backend (required for searxng).
	URL string `mapstructure:"url" yaml:"url"`
	// APIKeyEnv names the variable holding the backend's key.
	APIKeyEnv string `mapstructure:"api_key_env" yaml:"api_key_env"`
}

// Log configures Odin's log file.
type Log struct {
	// Level is debug, info, warn or error. Default info.
	Level string `mapstructure:"level" yaml:"level"`
	// File is the log path; default $XDG_STATE_HOME/odin/odin.log (Load
	// fills it in from StateDir).
	File string `mapstructure:"file" yaml:"file"`
}

// Store configures the session database.
type Store struct {
	// Path of the SQLite file; default $XDG_STATE_HOME/odin/odin.db (Load
	// fills it in from StateDir).
	Path string `mapstructure:"path" yaml:"path"`
	// URL chooses the store and wins over Path: an absolute file path or
	// sqlite:///abs/path (SQLite), or postgres://… / postgresql://…
	// (PostgreSQL, shared by several hosts). Only the user's odin.yaml,
	// ODIN_STORE_URL or `odin serve --store` may set it: a project's
	// odin.yaml that does is an error, since it would send every
	// transcript to a database the repository chose.
	URL string `mapstructure:"url" yaml:"url"`
}

// MCP configures Model Context Protocol servers.
type MCP struct {
	// Servers by name. The name becomes the middle of the tool names
	// (mcp__NAME__TOOL): letters, digits, "-" and "_". A project's servers
	// (odin.yaml or .mcp.json) never start before `odin trust`.
	Servers map[string]MCPServer `mapstructure:"servers" yaml:"servers"`
	// ConnectTimeout is how long a session waits for servers whose tools
	// it does not know yet before its first model request; a server still
	// connecting then joins later. Default 5s.
	ConnectTimeout time.Duration `mapstructure:"connect_timeout" yaml:"connect_timeout"`
	// DenyTools are MCP tools no agent is offered, as glob patterns of
	// their Odin names: mcp__github__delete_repo, mcp__github__* (a whole
	// server). Every layer's patterns add up: a project may add to the
	// list, never lift what a lower layer denies.
	DenyTools []string `mapstructure:"deny_tools" yaml:"deny_tools"`
}

// MCPServer is one MCP server: a command speaking MCP on stdio, or an
// HTTP endpoint (Streamable HTTP, or the legacy SSE transport). The keys
// are Claude Code's .mcp.json keys. ${VAR} and ${VAR:-default} in command,
// args, env, url and headers are expanded from Odin's environment; for a
// server the project declares, never from a secret-looking variable or a
// provider key's value (they expand to nothing).
type MCPServer struct {
	// Type is stdio, http (Streamable HTTP) or sse; default stdio when
	// command is set, http when url is.
	Type string `mapstructure:"type" yaml:"type"`
	// Command and Args start a stdio server, in the project root, inside
	// the sandbox: the network on (for a server the project declares, only
	// the allowed domains through the proxy, and only while the project
	// files it runs are those `odin trust` pinned), the file system
	// read-only except the project's private cache (XDG_CACHE_HOME, npm's
	// cache), the server's data directory under Odin's state directory
	// (XDG_DATA_HOME, ODIN_MCP_DATA) and the Writable directories. Its
	// environment is the sandbox's (PATH, HOME, locales, toolchains) plus
	// Env; an Env entry that names or carries a secret (GITHUB_TOKEN, a
	// provider key) is passed only when the user's own config declares it.
	Command string            `mapstructure:"command" yaml:"command"`
	Args    []string          `mapstructure:"args" yaml:"args"`
	Env     map[string]string `mapstructure:"env" yaml:"env"`
	// URL of an http or sse server.
	URL string `mapstructure:"url" yaml:"url"`
	// Headers are sent with every HTTP request.
	Headers map[string]string `mapstructure:"headers" yaml:"headers"`
	// BearerTokenEnv names the environment variable holding a token sent
	// as "Authorization: Bearer TOKEN". Honoured only for a server wholly
	// from the user's own config.
	BearerTokenEnv string `mapstructure:"bearer_token_env" yaml:"bearer_token_env"`
	// Startup is lazy (default: started when one of its tools is first
	// called, once its tool list is known from an earlier session) or
	// eager (started with the session).
	Startup string `mapstructure:"startup" yaml:"startup"`
	// Timeout bounds one tool call. Default 2m.
	Timeout time.Duration `mapstructure:"timeout" yaml:"timeout"`
	// Disabled keeps the server from starting.
	Disabled bool `mapstructure:"disabled" yaml:"disabled"`
	// Writable are directories a stdio server may write in the sandbox
	// ("~/" is the home directory; relative paths are taken against the
	// config file's directory). Only the user's own config grants them,
	// and only to a server no project file touches: a server whose
	// writable list comes from a project (odin.yaml, .mcp.json, a plugin)
	// does not start. Odin's protected paths (.git, .odin, its config and
	// state) stay read-only inside them.
	Writable []string `mapstructure:"writable" yaml:"writable"`
	// Sampling is what a server's request to use the model
	// (sampling/createMessage) gets: ask (default: the user is shown the
	// server and its prompt; headless runs decline), allow (answered by
	// the small model without asking; honoured only from the user's own
	// config, a project's allow asks) or deny. Either way the tokens are
	// charged to the agent whose tool call the request came from.
	Sampling string `mapstructure:"sampling" yaml:"sampling"`
	// OAuth configures the OAuth 2.1 login of an http server that answers
	// 401 (see docs/mcp-auth.md): without it, Odin registers itself with
	// the server's authorization server (dynamic client registration).
	// Tokens come from `odin mcp login NAME` and live in Odin's state
	// directory; a server with bearer_token_env or an Authorization
	// header does not use OAuth.
	OAuth *MCPOAuth `mapstructure:"oauth" yaml:"oauth,omitempty" json:",omitempty"`
}

// MCPOAuth is a pre-registered OAuth client for an MCP server.
type MCPOAuth struct {
	// ClientID is the client registered with the server's authorization
	// server (its redirect URI must accept http://127.0.0.1 on any port).
	ClientID string `mapstructure:"client_id" yaml:"client_id"`
	// ClientSecret, for a confidential client; ${VAR} expands (from your
	// environment, for a server of your own config only).
	ClientSecret string `mapstructure:"client_secret" yaml:"client_secret"`
	// Scopes to request in place of those the server advertises; scopes
	// a server later demands (403 insufficient_scope) are added at the
	// next login.
	Scopes []string `mapstructure:"scopes" yaml:"scopes"`
}
