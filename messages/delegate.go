package messages

import (
	"encoding/json"
	"time"
)

// Delegate asks a specialist to perform a task. It is the first message a
// specialist actor handles; the specialist answers its parent with exactly
// one *Report.
type Delegate struct {
	TaskID string `json:"task_id"`
	// Agent is the roster name of the specialist ("search", "code", ...).
	Agent string `json:"agent"`
	// Description is a 3-5 word label for the UI.
	Description string `json:"description"`
	// Brief is the task, self-contained: the specialist sees nothing else
	// of the conversation.
	Brief string `json:"brief"`
	// Mode of the message that caused the delegation.
	Mode Mode `json:"mode"`
	// Timeout is the specialist's deadline, already capped at its maximum.
	Timeout   time.Duration `json:"timeout"`
	SessionID string        `json:"session_id"`
	// ParentCallID is the Orchestrator's tool call this task answers.
	ParentCallID string `json:"parent_call_id,omitempty"`
	// Files, when set, are the only files (absolute paths or globs) the
	// specialist may write: the brief named them, and its guard refuses
	// the rest.
	Files []string `json:"files,omitempty"`
}

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
}
