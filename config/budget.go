package config

import "time"

// Budget bounds what one scope may spend; a zero (or absent) field is
// unlimited. The supervisor enforces it, not the prompt: a specialist
// over its budget is stopped and the Orchestrator told which limit.
type Budget struct {
	// Tokens bounds prompt + completion tokens.
	Tokens int64 `mapstructure:"tokens" yaml:"tokens"`
	// ToolCalls bounds the number of tool calls.
	ToolCalls int `mapstructure:"tool_calls" yaml:"tool_calls"`
	// Wall bounds the wall-clock time ("10m").
	Wall time.Duration `mapstructure:"wall" yaml:"wall"`
	// USD bounds the cost in US dollars, priced with model_info (a model
	// of unknown price counts as free, so set its price to bound it).
	USD float64 `mapstructure:"usd" yaml:"usd"`
}

// Budgets are the budgets beyond each agent's own (agents.NAME.budget and
// an agent file's budget:), all enforced at once: the tightest wins.
type Budgets struct {
	// Gate bounds each specialist run of a quality gate (review, test,
	// diagnosis, fix), on top of the agent's own budget.
	Gate Budget `mapstructure:"gate" yaml:"gate"`
	// Turn bounds everything one message spends: the Orchestrator's calls
	// and every specialist's.
	Turn Budget `mapstructure:"turn" yaml:"turn"`
	// Session bounds the whole session, earlier turns (and earlier
	// processes, for a resumed session) included. odin run's
	// --max-budget-usd sets session.usd.
	Session Budget `mapstructure:"session" yaml:"session"`
	// RetrySmall lets the Orchestrator run a specialist stopped over its
	// own or its gate's budget once more on the small model. Default true.
	RetrySmall bool `mapstructure:"retry_small" yaml:"retry_small"`
}

// Runaway configures the supervisor's runaway detection: a specialist
// that trips it is paused (the REPL asks whether it may go on) or, in a
// headless run, stopped with the reason.
type Runaway struct {
	// Identical trips after this many identical calls (same tool, same
	// arguments) in a row with identical results. Default 5; 0 turns it
	// off.
	Identical int `mapstructure:"identical" yaml:"identical"`
	// Window trips after this many calls in a row without a new file
	// read, a file edit or a new test result. Default 30; 0 turns it off.
	Window int `mapstructure:"window" yaml:"window"`
}

func (v *validator) budget(key string, b Budget) {
	notNegative(v, key+".tokens", b.Tokens)
	notNegative(v, key+".tool_calls", b.ToolCalls)
	v.notNegativeDuration(key+".wall", b.Wall)
	if b.USD < 0 {
		v.add(key+".usd", "must not be negative (got %v)", b.USD)
	}
}

func (v *validator) budgets(c *Config) {
	v.budget("budget.gate", c.Budget.Gate)
	v.budget("budget.turn", c.Budget.Turn)
	v.budget("budget.session", c.Budget.Session)
	notNegative(v, "runaway.identical", c.Runaway.Identical)
	notNegative(v, "runaway.window", c.Runaway.Window)
	if c.Runaway.Identical == 1 {
		v.add("runaway.identical", "must be at least 2 (one call is never a repeat) or 0 to turn it off")
	}
}
