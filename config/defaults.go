package config

import "time"

// DefaultProvider is the name of the built-in provider: OpenAI's API, or
// whatever $OPENAI_BASE_URL points at.
const DefaultProvider = "openai"

// OpenAIBaseURL is the built-in provider's base_url when neither a config
// file nor $OPENAI_BASE_URL sets one.
const OpenAIBaseURL = "https://api.openai.com/v1"

// DefaultContextWindow is the context window assumed for a model that
// model_info does not describe (or describes without context_window).
const DefaultContextWindow = 128000

// DefaultHookTimeout is the timeout of a hook whose timeout is unset or 0.
const DefaultHookTimeout = 30 * time.Second

// Modes are the values of mode, from the most to the least restricted.
func Modes() []string { return []string{"ask", "plan", "edit"} }

// HookEvents are the event names hooks may be attached to.
func HookEvents() []string {
	return []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop", "PreCompact"}
}

// BuiltinAgents are the names of the built-in specialists. An agents entry
// with one of these names overrides it; any other name declares a custom
// agent, which needs a description and a prompt.
func BuiltinAgents() []string {
	return []string{"search", "research", "code", "review", "test", "docs", "qa", "init"}
}

// AgentRoles are the roles an agent may take: the quality-gate roles and
// researcher (who answers the other specialists' research requests);
// "none" drops a built-in's role.
func AgentRoles() []string {
	return []string{"reviewer", "tester", "fixer", "diagnostician", "researcher", "none"}
}

// ReportKinds are the Report schemas an agent may declare.
func ReportKinds() []string {
	return []string{"search", "research", "code", "review", "test", "docs", "qa", "init", "generic"}
}

// AgentColors are the colour names an agent's color may take (besides
// #rrggbb).
func AgentColors() []string {
	return []string{"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white", "orange", "purple", "pink", "gray"}
}

// SearchKinds are the web search backends web.search.kind may name.
func SearchKinds() []string { return []string{"searxng", "brave", "tavily"} }

// LogLevels are the values of log.level.
func LogLevels() []string { return []string{"debug", "info", "warn", "error"} }

// DefaultRiskPaths are the default quality.risk_paths: any path with a
// file or directory name containing auth, payment, security, secret,
// crypto or credential, and .env files. Each word has two globs, one for
// files and one for everything under a directory. Matching is
// case-insensitive (see Quality.MatchRiskPath), so Auth/ and SECURITY.md
// count; the cost of a false positive ("author.go") is one extra review.
func DefaultRiskPaths() []string {
	var globs []string
	for _, word := range []string{"auth", "payment", "security", "secret", "crypto", "credential"} {
		globs = append(globs, "**/*"+word+"*", "**/*"+word+"*/**")
	}
	return append(globs, "**/.env*")
}

// DefaultPublicAPI are the default quality.public_api globs: interface
// definition files whose change is an API change whatever the language.
func DefaultPublicAPI() []string {
	return []string{"**/*.proto", "**/*.graphql", "**/openapi*.{yaml,yml,json}", "**/swagger*.{yaml,yml,json}"}
}

// Default returns the built-in configuration: the lowest layer of Load.
// It is valid on its own. Log.File and Store.Path are left empty here
// because they depend on the environment; Load fills them from StateDir.
func Default() *Config {
	return &Config{
		Provider: DefaultProvider,
		Providers: map[string]Provider{
			DefaultProvider: {
				BaseURL:     OpenAIBaseURL,
				APIKeyEnv:   "OPENAI_API_KEY",
				Timeout:     5 * time.Minute,
				IdleTimeout: 90 * time.Second,
				Budget:      15 * time.Minute,
				MaxRetries:  4,
			},
		},
		Models:    Models{Main: "gpt-4o", Small: "gpt-4o-mini"},
		ModelInfo: defaultModelInfo(),
		Mode:      "edit",
		MaxTurns:  50,
		Supervision: Supervision{
			MaxRestarts: 2,
			Window:      time.Minute,
		},
		Budget:  Budgets{RetrySmall: true},
		Runaway: Runaway{Identical: 5, Window: 30},
		Quality: Quality{
			RiskPaths:     DefaultRiskPaths(),
			PublicAPI:     DefaultPublicAPI(),
			MaxFixRounds:  2,
			CheckTimeout:  5 * time.Minute,
			CodeLint:      "auto",
			RefactorLines: 300,
		},
		Context:     Context{CompactAt: 0.8, KeepRecent: 6, MaxToolArgument: 16 << 20},
		Permissions: Permissions{Sandbox: "auto", SandboxLimits: DefaultSandboxLimits()},
		Web: Web{
			Timeout:  30 * time.Second,
			MaxBytes: 5 << 20,
			CacheTTL: 15 * time.Minute,
			ResearchTTL: ResearchTTL{
				General:  24 * time.Hour,
				Docs:     168 * time.Hour,
				Security: time.Hour,
			},
		},
		Log: Log{Level: "info"},
		MCP: MCP{ConnectTimeout: 5 * time.Second},
	}
}

// defaultModelInfo holds OpenAI's list prices (USD per million tokens) and
// windows for its common models, and zero-priced entries for popular local
// models served by Ollama, so cost and compaction work out of the box.
// Local entries name no provider: they run on whichever provider is the
// default (typically the one $OPENAI_BASE_URL points at).
func defaultModelInfo() map[string]ModelInfo {
	return map[string]ModelInfo{
		"gpt-4o":       {ContextWindow: 128000, MaxOutput: 16384, Price: Price{Input: 2.50, CachedInput: 1.25, Output: 10.00}},
		"gpt-4o-mini":  {ContextWindow: 128000, MaxOutput: 16384, Price: Price{Input: 0.15, CachedInput: 0.075, Output: 0.60}},
		"gpt-4.1":      {ContextWindow: 1047576, MaxOutput: 32768, Price: Price{Input: 2.00, CachedInput: 0.50, Output: 8.00}},
		"gpt-4.1-mini": {ContextWindow: 1047576, MaxOutput: 32768, Price: Price{Input: 0.40, CachedInput: 0.10, Output: 1.60}},
		"gpt-4.1-nano": {ContextWindow: 1047576, MaxOutput: 32768, Price: Price{Input: 0.10, CachedInput: 0.025, Output: 0.40}},
		"o4-mini":      {ContextWindow: 200000, MaxOutput: 100000, Price: Price{Input: 1.10, CachedInput: 0.275, Output: 4.40}},
		// Local models cost nothing per token; their windows are the
		// models' own (Ollama may run them with a smaller num_ctx).
		"llama3.1:8b":      {ContextWindow: 131072},
		"qwen2.5-coder:7b": {ContextWindow: 32768},
		"gpt-oss:20b":      {ContextWindow: 131072},
	}
}

// entryDefaults are the defaults of every entry of a map section, whatever
// its name: a provider declared with only a base_url still gets a timeout
// and retries. They sit in the defaults layer, so any file value wins.
func entryDefaults() (Provider, ModelInfo) {
	return Provider{Timeout: 5 * time.Minute, IdleTimeout: 90 * time.Second, Budget: 15 * time.Minute, MaxRetries: 4}, ModelInfo{ContextWindow: DefaultContextWindow}
}
