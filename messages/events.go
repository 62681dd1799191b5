package messages

import (
	"encoding/json"
	"time"
)

// Event is something that happened in a session. Events are published on the
// session's event bus; the REPL, the JSON stream output and the store
// subscribe to it.
type Event interface {
	// EventType is the event's name in the JSON stream ("tool_started").
	EventType() string
}

// Envelope is an Event with where and when it happened.
type Envelope struct {
	Session string
	Time    time.Time
	Event   Event
}

// MarshalJSON renders {"type": ..., "session": ..., "time": ..., <event fields>}.
func (e Envelope) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(e.Event)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		Type    string    `json:"type"`
		Session string    `json:"session,omitempty"`
		Time    time.Time `json:"time"`
	}{e.Event.EventType(), e.Session, e.Time})
	if err != nil {
		return nil, err
	}
	if string(body) == "{}" || string(body) == "null" {
		return head, nil
	}
	// Splice the two objects: head without its closing brace, a comma,
	// body without its opening brace.
	out := make([]byte, 0, len(head)+len(body))
	out = append(out, head[:len(head)-1]...)
	out = append(out, ',')
	out = append(out, body[1:]...)
	return out, nil
}

// Origin says which agent an event comes from: the Orchestrator (empty
// TaskID) or a specialist task.
type Origin struct {
	Agent  string `json:"agent"`
	TaskID string `json:"task_id,omitempty"`
}

// InputQueued: an input arrived while a turn was running.
type InputQueued struct {
	Input    UserMessage `json:"input"`
	Position int         `json:"position"`
}

// InputRemoved: a queued input was dropped before it started.
type InputRemoved struct {
	ID string `json:"id"`
}

// TurnStarted: the Orchestrator took an input.
type TurnStarted struct {
	Input UserMessage `json:"input"`
}

// TextDelta is streamed answer text.
type TextDelta struct {
	Origin
	Text string `json:"text"`
}

// ReasoningDelta is streamed reasoning text.
type ReasoningDelta struct {
	Origin
	Text string `json:"text"`
}

// Retrying: a model call failed and will be retried.
type Retrying struct {
	Origin
	Attempt int    `json:"attempt"`
	WaitMS  int64  `json:"wait_ms"`
	Error   string `json:"error"`
}

// RateLimited: a model call waits for its provider's quota, shared by
// every agent (providers.NAME.rate_limit), or for the pause a 429 set.
type RateLimited struct {
	Origin
	Provider string `json:"provider"`
	WaitMS   int64  `json:"wait_ms"`
}

// ToolStarted: a tool call began.
type ToolStarted struct {
	Origin
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

// ToolFinished: a tool call ended.
type ToolFinished struct {
	Origin
	CallID  string        `json:"call_id"`
	Name    string        `json:"name"`
	IsError bool          `json:"is_error,omitempty"`
	Denied  bool          `json:"denied,omitempty"`
	Output  string        `json:"output"` // possibly shortened
	Files   []string      `json:"files,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// AgentStarted: a specialist was spawned for a task.
type AgentStarted struct {
	TaskID      string        `json:"task_id"`
	Agent       string        `json:"agent"`
	Description string        `json:"description"`
	Model       string        `json:"model"`
	Timeout     time.Duration `json:"timeout_ns"`
}

// AgentProgress is a specialist's running tally (seed 001): tokens, tool
// calls and its last five activities.
type AgentProgress struct {
	TaskID     string        `json:"task_id"`
	Agent      string        `json:"agent"`
	Tokens     int64         `json:"tokens"`
	ToolCalls  int           `json:"tool_calls"`
	Activities []string      `json:"activities"`
	Elapsed    time.Duration `json:"elapsed_ns"`
	// USD is the run's cost so far; Budget its limits (zero: none). A
	// resumed run counts what it spent before.
	USD    float64 `json:"usd"`
	Budget Budget  `json:"budget,omitzero"`
}

// AgentRestarted: a specialist crashed and was restarted.
type AgentRestarted struct {
	TaskID  string `json:"task_id"`
	Agent   string `json:"agent"`
	Restart int    `json:"restart"`
	Reason  string `json:"reason"`
}

// AgentFinished: a specialist reported (or was reported for).
type AgentFinished struct {
	Report Report `json:"report"`
}

// UsageUpdated: a model call finished with this usage.
type UsageUpdated struct {
	Origin
	Model string `json:"model"`
	Usage Usage  `json:"usage"`
}

// TodosUpdated: a todo list changed: the session's, or a specialist's own.
type TodosUpdated struct {
	// Agent and TaskID name the specialist whose list it is; empty for
	// the session's.
	Agent  string `json:"agent,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	Todos  []Todo `json:"todos"`
}

// Todo is one item of a todo list (seed 000 schema, with seed 004's
// priorities and dependencies).
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"` // pending, in_progress, completed
	// Priority is high, medium or low; empty is medium.
	Priority string `json:"priority,omitempty"`
	// BlockedBy are the IDs of the items that must be completed first.
	BlockedBy []string `json:"blocked_by,omitempty"`
	// Acceptance are the item's acceptance criteria, which QA checks.
	Acceptance []AcceptanceCriterion `json:"acceptance,omitempty"`
}

// GateDecided: the quality gates decided what a change set needs.
type GateDecided struct {
	Decision GateDecision `json:"decision"`
}

// GateStage: a gate stage started (Passed unset) or finished.
type GateStage struct {
	GateStageResult
	Done bool `json:"done"`
}

// Notice is a message for the user that is not part of the answer
// (warnings, hook output, compaction).
type Notice struct {
	Level string `json:"level"` // info, warn, error
	Text  string `json:"text"`
}

// ApprovalRequested: a tool call needs the user's permission.
type ApprovalRequested struct {
	ID      string `json:"id"`
	Origin         // who asks
	Tool    string `json:"tool"`
	Subject string `json:"subject"` // the command or path
	Reason  string `json:"reason"`  // the rule that asked
	// CallID is the model's tool call that asks (ToolStarted.CallID),
	// empty when no call asks.
	CallID string `json:"call_id,omitempty"`
}

// ApprovalResolved: an approval was answered.
type ApprovalResolved struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // once, session, deny
}

// ElicitationRequested: an MCP server asks the user for input
// (elicitation/create). Message and the schema's texts are the server's,
// untrusted: show them sanitised, never as markup.
type ElicitationRequested struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	// Mode is "form" (fill in Schema's fields) or "url" (open URL).
	Mode    string `json:"mode"`
	Message string `json:"message"`
	// Schema is the requested form's JSON schema, as the server sent it.
	Schema json.RawMessage `json:"schema,omitempty"`
	URL    string          `json:"url,omitempty"`
	// CallID is the model's tool call during which the server asked,
	// empty when no call of this session asks.
	CallID string `json:"call_id,omitempty"`
}

// ElicitationResolved: an elicitation was answered (accept, decline or
// cancel), or withdrawn (cancel) when its call ended first.
type ElicitationResolved struct {
	ID     string `json:"id"`
	Action string `json:"action"`
}

// Compacted: old history was replaced by a summary.
type Compacted struct {
	Messages     int   `json:"messages"`
	TokensBefore int64 `json:"tokens_before"`
	TokensAfter  int64 `json:"tokens_after"`
	// Requests is how many summarisation requests it took: more than one
	// when the history was larger than the summariser's context window.
	Requests int `json:"requests,omitempty"`
}

// Init is the first event of a headless stream-json run: what the run
// works with, before anything happens.
type Init struct {
	SessionID string `json:"session_id"`
	// Resumed is true when the run continues a stored session.
	Resumed    bool     `json:"resumed"`
	Cwd        string   `json:"cwd"` // the project root
	Model      string   `json:"model"`
	SmallModel string   `json:"small_model,omitempty"`
	Mode       Mode     `json:"mode"`
	Tools      []string `json:"tools"`
	Agents     []string `json:"agents"`
	Version    string   `json:"odin_version"`
}

// TurnFinished: a turn ended.
type TurnFinished struct {
	Result TurnResult `json:"result"`
}

// SessionFenced: another process opened this session and took it over
// (a later claim in the store), so this one stopped: the running turn is
// cancelled, inputs are refused, and nothing more is stored from here.
// Epoch is the new owner's claim (0 when the session was deleted).
type SessionFenced struct {
	Epoch  int64  `json:"epoch"`
	Reason string `json:"reason"`
}

// Resync: this subscriber fell too far behind and Dropped events were
// discarded from its backlog instead of stalling the session (streamed
// text, tool and agent progress; never turn, input, approval or fencing
// events).
// What they said is in the session's state: the turn's result, the stored
// transcript (odin sessions show).
type Resync struct {
	Dropped int `json:"dropped"`
}

func (InputQueued) EventType() string       { return "input_queued" }
func (InputRemoved) EventType() string      { return "input_removed" }
func (TurnStarted) EventType() string       { return "turn_started" }
func (TextDelta) EventType() string         { return "text_delta" }
func (ReasoningDelta) EventType() string    { return "reasoning_delta" }
func (Retrying) EventType() string          { return "retrying" }
func (RateLimited) EventType() string       { return "rate_limited" }
func (ToolStarted) EventType() string       { return "tool_started" }
func (ToolFinished) EventType() string      { return "tool_finished" }
func (AgentStarted) EventType() string      { return "agent_started" }
func (AgentProgress) EventType() string     { return "agent_progress" }
func (AgentRestarted) EventType() string    { return "agent_restarted" }
func (AgentFinished) EventType() string     { return "agent_finished" }
func (UsageUpdated) EventType() string      { return "usage" }
func (TodosUpdated) EventType() string      { return "todos" }
func (GateDecided) EventType() string       { return "gate_decided" }
func (GateStage) EventType() string         { return "gate_stage" }
func (Notice) EventType() string            { return "notice" }
func (ApprovalRequested) EventType() string { return "approval_requested" }
func (ApprovalResolved) EventType() string  { return "approval_resolved" }
func (Compacted) EventType() string         { return "compacted" }
func (TurnFinished) EventType() string      { return "turn_finished" }
func (Init) EventType() string              { return "init" }
func (Resync) EventType() string            { return "resync" }
func (SessionFenced) EventType() string     { return "session_fenced" }

func (ElicitationRequested) EventType() string { return "elicitation_requested" }
func (ElicitationResolved) EventType() string  { return "elicitation_resolved" }
