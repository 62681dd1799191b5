package messages

import (
	"fmt"
	"time"
)

// Mode is how a message may act on the project.
type Mode string

// Modes. Ask and plan are read-only; plan also writes a plan file.
const (
	ModeAsk  Mode = "ask"
	ModePlan Mode = "plan"
	ModeEdit Mode = "edit"
)

// Modes lists every mode in cycling order.
var Modes = []Mode{ModeAsk, ModePlan, ModeEdit}

// ParseMode accepts a mode name ("ask", "plan", "edit", or the seed's
// "ask_mode" forms).
func ParseMode(s string) (Mode, error) {
	switch s {
	case "ask", "ask_mode":
		return ModeAsk, nil
	case "plan", "plan_mode":
		return ModePlan, nil
	case "edit", "edit_mode":
		return ModeEdit, nil
	}
	return "", fmt.Errorf("unknown mode %q (want ask, plan or edit)", s)
}

// ReadOnly reports whether the mode forbids changes to the project.
func (m Mode) ReadOnly() bool { return m != ModeEdit }

// UserMessage is one input to a session's Orchestrator. Inputs that arrive
// while a turn runs are queued in arrival order, each keeping its mode.
type UserMessage struct {
	ID   string    `json:"id"`
	Body string    `json:"body"`
	Mode Mode      `json:"mode"`
	At   time.Time `json:"at"`
	// Agent, when set, makes this a direct task: the named specialist runs
	// with Body as its brief, without the Orchestrator's model (commands
	// such as /init). The turn's result carries its Report.
	Agent string `json:"agent,omitempty"`
	// Images are pictures attached to the message (odin run --image, an
	// image path mentioned in the REPL), already checked by the front end.
	Images []Image `json:"images,omitempty"`
	// Resumed marks the continuation of a turn a crash interrupted: its
	// user message is stored already, so the turn goes on from the
	// stored history without adding it again.
	Resumed bool `json:"resumed,omitempty"`
}

// Image is a picture sent to the model: a PNG, JPEG, GIF or WebP file's
// bytes, or an image an MCP tool returned.
type Image struct {
	// Name is the file name or the tool the image came from.
	Name string `json:"name,omitempty"`
	MIME string `json:"mime"`
	// Data are the image's bytes; events (TurnStarted) leave them out.
	Data []byte `json:"data,omitempty"`
	// Width and Height are in pixels, 0 when unknown.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// Cancel ends the running turn. The history stays valid: unfinished tool
// calls are recorded as cancelled. Queued inputs are kept.
type Cancel struct {
	Reason string
}

// RemoveQueued drops a queued input before it starts. The Orchestrator
// answers with *QueueState.
type RemoveQueued struct {
	ID string
}

// QueueRequest asks the Orchestrator for its *QueueState.
type QueueRequest struct{}

// QueueState is the Orchestrator's running input and its queue.
type QueueState struct {
	Running *UserMessage  `json:"running,omitempty"`
	Queued  []UserMessage `json:"queued"`
}

// TurnStatus is how a turn ended.
type TurnStatus string

// Turn statuses.
const (
	TurnDone       TurnStatus = "done"
	TurnFailed     TurnStatus = "failed"
	TurnCancelled  TurnStatus = "cancelled"
	TurnGateFailed TurnStatus = "gate_failed" // a mandatory quality gate failed after the fix rounds
	// TurnBudgetExceeded: the turn's or the session's budget was spent
	// (TurnResult.Budget says which limit).
	TurnBudgetExceeded TurnStatus = "budget_exceeded"
)

// Usage is token accounting with its cost.
type Usage struct {
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CachedTokens     int64   `json:"cached_tokens,omitempty"`
	ReasoningTokens  int64   `json:"reasoning_tokens,omitempty"`
	TotalTokens      int64   `json:"total_tokens"`
	Cost             float64 `json:"cost_usd"`
	// Estimated is true when some of the tokens were estimated locally
	// because the provider reported none.
	Estimated bool `json:"estimated,omitempty"`
	// CostUnknown is true when some of the tokens were used by a model
	// with no known price: Cost then counts only the priced ones.
	CostUnknown bool `json:"cost_unknown,omitempty"`
	// Parts is the token ledger of the prompt: its estimated tokens per
	// part (system, tools, history, context, input), cached or not; zero
	// when the client kept none. An array, so that Usage stays comparable.
	Parts Ledger `json:"parts,omitzero"`
}

// Ledger is a prompt's token ledger, one entry per part in the order a
// request lays them out: system, tools, history, context, input.
type Ledger [5]PartTokens

// PartTokens is one part of a prompt's token ledger: its estimated tokens
// and how many of them a provider's prefix cache served.
type PartTokens struct {
	Part   string `json:"part"`
	Tokens int64  `json:"tokens"`
	Cached int64  `json:"cached,omitempty"`
}

// Add returns the ledgers l and m summed part by part.
func (l Ledger) Add(m Ledger) Ledger {
	for i := range l {
		if l[i].Part == "" {
			l[i].Part = m[i].Part
		}
		l[i].Tokens += m[i].Tokens
		l[i].Cached += m[i].Cached
	}
	return l
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
		Cost:             u.Cost + v.Cost,
		Estimated:        u.Estimated || v.Estimated,
		CostUnknown:      u.CostUnknown || v.CostUnknown,
		Parts:            u.Parts.Add(v.Parts),
	}
}

// AgentUsage is one agent's share of a turn's usage.
type AgentUsage struct {
	Agent string `json:"agent"`
	Model string `json:"model"`
	Usage
}

// ToolCallRecord is one tool call of a turn, for reports and JSON output.
type ToolCallRecord struct {
	Agent   string   `json:"agent"`
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Input   string   `json:"input"`
	IsError bool     `json:"is_error,omitempty"`
	Denied  bool     `json:"denied,omitempty"`
	Files   []string `json:"files,omitempty"`
}

// TurnResult is the outcome of one input.
type TurnResult struct {
	Input  UserMessage `json:"input"`
	Status TurnStatus  `json:"status"`
	// Answer is the final answer shown to the user. When quality gates ran
	// it was written after the last of them, from the final state of the
	// change and the gates' outcomes; otherwise it is the model's answer.
	Answer string `json:"answer"`
	// Interim is the Orchestrator's answer from before the quality gates,
	// when gates ran: progress that fix rounds may have overtaken, never
	// the answer.
	Interim string `json:"interim,omitempty"`
	// Error explains a failed or cancelled turn.
	Error string `json:"error,omitempty"`
	// Files are the project files the turn changed (relative to the root).
	Files []string `json:"files,omitempty"`
	// Diff is the unified diff of those files.
	Diff string `json:"diff,omitempty"`
	// Gates is the quality-gate report, nil when no change was made.
	Gates *GateReport `json:"gates,omitempty"`
	// ToolCalls lists every tool call made by the Orchestrator.
	ToolCalls []ToolCallRecord `json:"tool_calls"`
	// Usage totals the turn; ByAgent splits it.
	Usage   Usage        `json:"usage"`
	ByAgent []AgentUsage `json:"by_agent,omitempty"`
	// PlanFile is the plan written in plan mode, relative to the root.
	PlanFile string `json:"plan_file,omitempty"`
	// Report is the specialist's report of a direct task (Session.RunAgent).
	Report *Report `json:"report,omitempty"`
	// NotSaved, when set, says why the turn's history could not be
	// committed to the session store: the answer was given, but a
	// restart or a resumed session will not see it. When it is empty the
	// turn's input, replies and tool results were committed before this
	// result was published.
	NotSaved string        `json:"not_saved,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Budget is the limit that stopped a budget_exceeded turn.
	Budget *BudgetExceeded `json:"budget,omitempty"`
}
