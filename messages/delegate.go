package messages

import (
	"encoding/json"
	"time"
)

// Delegate asks a specialist to perform a task. A specialist actor is
// spawned from its kind alone and receives the Delegate as its first
// message: it resolves its model, tools and path guard from Agent where it
// runs, so everything it needs to know is in this plain struct. It answers
// its parent with *AgentProgress messages while it works and exactly one
// *Report at the end.
type Delegate struct {
	TaskID string `json:"task_id"`
	// Agent is the roster name of the specialist ("search", "code", ...).
	Agent string `json:"agent"`
	// Description is a 3-5 word label for the UI.
	Description string `json:"description"`
	// Brief is the task. With ContextBrief the specialist sees nothing
	// else of the conversation.
	Brief string `json:"brief"`
	// Mode of the message that caused the delegation.
	Mode Mode `json:"mode"`
	// Timeout is the specialist's deadline, already capped at its maximum.
	Timeout   time.Duration `json:"timeout"`
	SessionID string        `json:"session_id"`
	// ParentCallID is the Orchestrator's tool call this task answers.
	ParentCallID string `json:"parent_call_id,omitempty"`

	// Model overrides the roster entry's model ("main" or "small").
	Model string `json:"model,omitempty"`
	// MaxTurns is the model-call budget of this task (0: the roster's).
	MaxTurns int `json:"max_turns,omitempty"`
	// Thoroughness is quick, medium or very thorough (seed 001).
	Thoroughness Thoroughness `json:"thoroughness,omitempty"`
	// Context says what of the parent's conversation the specialist sees;
	// ContextText is that context, rendered by the parent (empty for
	// ContextBrief), and Files the files the parent points it to, read by
	// the specialist through its own path guard.
	Context     ContextMode `json:"context,omitempty"`
	ContextText string      `json:"context_text,omitempty"`
	Files       []string    `json:"files,omitempty"`
	// Resume continues the finished run TaskID: the specialist reloads
	// its stored transcript and takes Brief as the next instruction.
	Resume bool `json:"resume,omitempty"`
	// ChangeSet names the turn's change set, which the specialist's
	// writes are checkpointed in (resolved where it runs).
	ChangeSet string `json:"change_set,omitempty"`
	// Supervised makes the specialist wait for its parent's go-ahead
	// after each model response and each batch of tool results (the
	// supervisor's budget and runaway checks).
	Supervised bool `json:"supervised,omitempty"`
	// Budget is what the run may spend: the delegation's request (which
	// may only lower the agent's), then, once the supervisor has set it
	// up, the run's whole budget. Zero fields are unlimited.
	Budget Budget `json:"budget,omitzero"`
	// WriteFiles, when set, are the only files (absolute paths or globs)
	// the specialist may write: the delegation named them, and its guard
	// refuses the rest.
	WriteFiles []string `json:"write_files,omitempty"`
	// Isolation worktree makes the specialist work in its own git
	// worktree and report its changes as a Patch (docs/workspaces.md).
	Isolation Isolation `json:"isolation,omitempty"`
}

// Thoroughness is how deep a specialist should go (seed 001's Explore
// levels). It changes the specialist's instructions and turn budget.
type Thoroughness string

// Thoroughness levels.
const (
	ThoroughQuick  Thoroughness = "quick"
	ThoroughMedium Thoroughness = "medium"
	ThoroughVery   Thoroughness = "very thorough"
)

// ContextMode is what a specialist sees of its parent's conversation
// (seed 001's fork_context, seed 003's input filters).
type ContextMode string

// Context modes.
const (
	// ContextBrief: the brief only.
	ContextBrief ContextMode = "brief"
	// ContextScoped: the brief, the files the parent names, and a compact
	// summary of the conversation (user requests and answers, no tool
	// output).
	ContextScoped ContextMode = "scoped"
	// ContextFork: the parent's conversation with tool outputs trimmed to
	// a budget.
	ContextFork ContextMode = "fork"
)

// ReportStatus is how a specialist's task ended.
type ReportStatus string

// Report statuses.
const (
	ReportOK        ReportStatus = "ok"
	ReportFailed    ReportStatus = "failed"     // error or crash beyond the restart limit
	ReportTimeout   ReportStatus = "timeout"    // deadline reached
	ReportMaxTurns  ReportStatus = "max_turns"  // turn limit reached
	ReportMaxTokens ReportStatus = "max_tokens" // token budget spent
	ReportCancelled ReportStatus = "cancelled"  // the turn was cancelled
	// ReportBudget: the supervisor stopped it over a budget (Report.Budget).
	ReportBudget ReportStatus = "budget_exceeded"
	// ReportNoProgress: the supervisor stopped it as a runaway
	// (Report.NoProgress).
	ReportNoProgress ReportStatus = "no_progress"
	// ReportConflict: an isolated specialist's patch conflicts with the
	// project (Report.Conflict); nothing of it was applied.
	ReportConflict ReportStatus = "conflict"
)

// Report is a specialist's answer to a Delegate.
type Report struct {
	TaskID string       `json:"task_id"`
	Agent  string       `json:"agent"`
	Status ReportStatus `json:"status"`
	// Summary is a short text for the Orchestrator's model.
	Summary string `json:"summary"`
	// Result is the specialist's structured result (SearchResult,
	// CodeResult, ...), validated against its schema; nil when the
	// specialist ended without reporting.
	Result json.RawMessage `json:"result,omitempty"`
	// Files are the files the specialist created or changed (absolute).
	Files []string `json:"files,omitempty"`
	// Error explains a status other than ok.
	Error    string        `json:"error,omitempty"`
	Usage    Usage         `json:"usage"`
	Model    string        `json:"model,omitempty"`
	Turns    int           `json:"turns"`
	Restarts int           `json:"restarts,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// SessionID is the specialist's child session (its transcript).
	SessionID string `json:"session_id,omitempty"`
	// Budget and NoProgress are the supervisor's verdict when it stopped
	// the run (status budget_exceeded, no_progress).
	Budget     *BudgetExceeded `json:"budget,omitempty"`
	NoProgress *NoProgress     `json:"no_progress,omitempty"`
	// Patch is an isolated specialist's change, applied by the
	// Orchestrator; Conflict says why it was not (status conflict).
	Patch    *Patch         `json:"patch,omitempty"`
	Conflict *PatchConflict `json:"conflict,omitempty"`
}
