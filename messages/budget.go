package messages

import (
	"fmt"
	"time"
)

// Budget bounds what a scope (one agent run, a gate's run, a turn, a
// session) may spend. A zero field is unlimited.
type Budget struct {
	Tokens    int64         `json:"tokens,omitempty"`
	ToolCalls int           `json:"tool_calls,omitempty"`
	Wall      time.Duration `json:"wall_ns,omitempty"`
	USD       float64       `json:"usd,omitempty"`
}

// IsZero reports whether b bounds nothing.
func (b Budget) IsZero() bool { return b == Budget{} }

// Tighter returns the stricter of b and o, field by field: a limit set in
// either holds, and where both set one the lower wins. Budgets combine
// only this way, so a delegation or a gate can lower an agent's budget
// but never raise it.
func (b Budget) Tighter(o Budget) Budget {
	return Budget{Tokens: lower(b.Tokens, o.Tokens), ToolCalls: lower(b.ToolCalls, o.ToolCalls),
		Wall: lower(b.Wall, o.Wall), USD: lower(b.USD, o.USD)}
}

func lower[T int | int64 | time.Duration | float64](a, b T) T {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Spend is what a scope has spent so far.
type Spend struct {
	Tokens    int64         `json:"tokens"`
	ToolCalls int           `json:"tool_calls"`
	Wall      time.Duration `json:"wall_ns"`
	USD       float64       `json:"usd"`
}

// Plus returns s + o.
func (s Spend) Plus(o Spend) Spend {
	return Spend{Tokens: s.Tokens + o.Tokens, ToolCalls: s.ToolCalls + o.ToolCalls, Wall: s.Wall + o.Wall, USD: s.USD + o.USD}
}

// Over returns the first limit of b that s exceeds, or nil. Tokens, wall
// time and dollars are over once they reach the limit (spending stops
// there); tool calls only past it (the limit is how many may run).
func (s Spend) Over(b Budget, scope BudgetScope) *BudgetExceeded {
	ex := func(limit BudgetLimit, spent, allowed float64) *BudgetExceeded {
		return &BudgetExceeded{Scope: scope, Limit: limit, Spent: spent, Allowed: allowed}
	}
	switch {
	case b.USD > 0 && s.USD >= b.USD:
		return ex(LimitUSD, s.USD, b.USD)
	case b.Tokens > 0 && s.Tokens >= b.Tokens:
		return ex(LimitTokens, float64(s.Tokens), float64(b.Tokens))
	case b.ToolCalls > 0 && s.ToolCalls > b.ToolCalls:
		return ex(LimitToolCalls, float64(s.ToolCalls), float64(b.ToolCalls))
	case b.Wall > 0 && s.Wall >= b.Wall:
		return ex(LimitWall, s.Wall.Seconds(), b.Wall.Seconds())
	}
	return nil
}

// BudgetLimit names one limit of a Budget.
type BudgetLimit string

// Budget limits.
const (
	LimitTokens    BudgetLimit = "tokens"
	LimitToolCalls BudgetLimit = "tool_calls"
	LimitWall      BudgetLimit = "wall"
	LimitUSD       BudgetLimit = "usd"
)

// BudgetScope says whose budget a limit belongs to.
type BudgetScope string

// Budget scopes.
const (
	ScopeAgent   BudgetScope = "agent"   // the agent's own (roster, agent file, delegation)
	ScopeGate    BudgetScope = "gate"    // budget.gate, for each run of a quality gate
	ScopeTurn    BudgetScope = "turn"    // budget.turn: everything one message spends
	ScopeSession BudgetScope = "session" // budget.session (--max-budget-usd): the whole session
)

// BudgetExceeded is the supervisor's typed verdict that a scope went over
// one of its limits. It is published as an event, carried in the stopped
// specialist's Report and in a turn's result. Spent and Allowed are in the
// limit's unit: tokens, tool calls, seconds or US dollars.
type BudgetExceeded struct {
	TaskID  string      `json:"task_id,omitempty"`
	Agent   string      `json:"agent,omitempty"`
	Scope   BudgetScope `json:"scope"`
	Limit   BudgetLimit `json:"limit"`
	Spent   float64     `json:"spent"`
	Allowed float64     `json:"allowed"`
}

// Text says which limit was passed, by how much: "session usd budget
// exceeded: spent $0.0213 of $0.0100".
func (b BudgetExceeded) Text() string {
	f := func(v float64) string {
		switch b.Limit {
		case LimitUSD:
			return fmt.Sprintf("$%.4f", v)
		case LimitWall:
			return (time.Duration(v * float64(time.Second))).Round(time.Millisecond).String()
		}
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%s %s budget exceeded: spent %s of %s", b.Scope, b.Limit, f(b.Spent), f(b.Allowed))
}

// NoProgressKind says how a run was found to make no progress.
type NoProgressKind string

// No-progress kinds.
const (
	// NoProgressRepeat: the same call with the same result, N times in a
	// row (runaway.identical).
	NoProgressRepeat NoProgressKind = "repeat"
	// NoProgressStall: a window of calls with no new file read, no edit
	// and no new test result (runaway.window).
	NoProgressStall NoProgressKind = "stall"
)

// NoProgress is the supervisor's typed verdict that a specialist is
// running away: it is published as an event when the run is paused, and
// carried in the Report when the run is stopped for it.
type NoProgress struct {
	TaskID string         `json:"task_id"`
	Agent  string         `json:"agent"`
	Kind   NoProgressKind `json:"kind"`
	// Calls is how many calls tripped it (the repeats, or the window).
	Calls int `json:"calls"`
	// Tool and Input are the repeated call (Repeat only).
	Tool  string `json:"tool,omitempty"`
	Input string `json:"input,omitempty"`
}

// Text describes the verdict for the model and the user.
func (n NoProgress) Text() string {
	if n.Kind == NoProgressRepeat {
		return fmt.Sprintf("no progress: %s made the same %s call %d times in a row with the same result", n.Agent, n.Tool, n.Calls)
	}
	return fmt.Sprintf("no progress: %s made %d tool calls without reading a new file, editing one or getting a new test result", n.Agent, n.Calls)
}

// EventType implements Event.
func (BudgetExceeded) EventType() string { return "budget_exceeded" }

// EventType implements Event.
func (NoProgress) EventType() string { return "no_progress" }
