package store

import (
	"context"
	"io/fs"
	"time"

	"github.com/odin-code/odin/internal/llm"
)

// Store is Odin's persistence. Implementations are safe for concurrent use
// by many goroutines and, for SQLite, by several processes on the same file:
// every method is one atomic transaction, a committed write is visible to
// every later call from any process, and concurrent writers are serialized
// (AppendMessage from several goroutines yields unique, gap-free sequence
// numbers in commit order).
//
// Errors wrap the sentinels of errors.go (ErrNotFound, ErrInvalid,
// ErrExists) with the operation; anything else is a storage failure. A
// cancelled ctx aborts the call and rolls its transaction back. Times are
// returned in UTC with nanosecond precision; zero times on input mean "now"
// where a method says so.
type Store interface {
	// CreateSession stores a new session and returns it as stored. An empty
	// ID is generated; zero CreatedAt/UpdatedAt are set to now; totals,
	// SummaryMessageID and MessageCount are ignored (they start empty).
	// Project must be absolute (ErrInvalid). A child session (ParentID set)
	// takes its parent's project when Project is empty; a parent that does
	// not exist is ErrNotFound, a different project ErrInvalid.
	CreateSession(ctx context.Context, s Session) (Session, error)
	// Session returns one session, or ErrNotFound.
	Session(ctx context.Context, id string) (Session, error)
	// Sessions lists sessions, most recently updated first.
	Sessions(ctx context.Context, q SessionQuery) ([]Session, error)
	// LatestSession returns the project's most recently updated root
	// session (the one `--continue` resumes), or ErrNotFound.
	LatestSession(ctx context.Context, project string) (Session, error)
	// Children returns the sessions whose parent is id, oldest first.
	Children(ctx context.Context, id string) ([]Session, error)
	// UpdateSession changes the fields of u that are non-nil and bumps
	// UpdatedAt. ErrNotFound if the session does not exist.
	UpdateSession(ctx context.Context, id string, u SessionUpdate) error
	// DeleteSession removes a session and, by cascade, its child sessions,
	// messages, tool history, todos and checkpoints. Usage records are
	// kept (with an empty SessionID) so that Stats still counts money
	// already spent. ErrNotFound if the session does not exist.
	DeleteSession(ctx context.Context, id string) error

	// AppendMessage commits m at the end of its session and returns it as
	// stored: Seq is always assigned (previous maximum + 1), an empty ID is
	// generated, zero CreatedAt is set to now, UpdatedAt to CreatedAt. The
	// session's MessageCount and UpdatedAt change in the same transaction.
	// ErrNotFound if the session does not exist, ErrInvalid for an unknown
	// role or a nil part.
	AppendMessage(ctx context.Context, m Message) (Message, error)
	// UpdateMessage replaces the model and parts of the stored message
	// m.ID (for a reply persisted while it streams) and bumps its
	// UpdatedAt; other fields of m are ignored. ErrNotFound if absent.
	UpdateMessage(ctx context.Context, m Message) error
	// AppendSummary appends m (the compaction summary) and makes it the
	// session's SummaryMessageID in one transaction, so history seen by
	// Messages starts at it.
	AppendSummary(ctx context.Context, m Message) (Message, error)
	// Messages returns the history to send to the model, in Seq order: from
	// the summary message on when the session was compacted (the summary
	// with role user), else every message. Before returning it repairs
	// dangling tool calls: each assistant tool call with no tool result
	// after it gets a result {IsError, Cancelled, Content:
	// CancelledContent}, stored right after that assistant message's tool
	// results (or in a new tool message placed directly after it, shifting
	// the Seq of later messages by one). The repair is committed, so it is
	// stable, and it may therefore write. ErrNotFound for no session.
	Messages(ctx context.Context, sessionID string) ([]Message, error)
	// AllMessages returns every stored message of the session in Seq
	// order, as stored (no summary cut, no role change, no repair).
	AllMessages(ctx context.Context, sessionID string) ([]Message, error)

	// RecordTool adds one entry to the session's tool history. Output is
	// capped at MaxToolOutput bytes (see CapOutput); zero At is now.
	RecordTool(ctx context.Context, r ToolRecord) error
	// ToolHistory returns the session's tool history in recording order.
	ToolHistory(ctx context.Context, sessionID string) ([]ToolRecord, error)

	// SetTodos replaces the session's todo list with todos (nil clears it).
	SetTodos(ctx context.Context, sessionID string, todos []Todo) error
	// Todos returns the session's todo list in the order it was set.
	Todos(ctx context.Context, sessionID string) ([]Todo, error)

	// AddUsage records one model call and atomically adds its tokens and
	// cost to the totals of its session and of that session's parent (a
	// specialist's spend counts in the session that started it). Zero At is
	// now; Project is taken from the session. ErrNotFound for no session.
	AddUsage(ctx context.Context, u UsageRecord) error
	// UsageRecords returns the session's usage records, oldest first.
	UsageRecords(ctx context.Context, sessionID string) ([]UsageRecord, error)
	// Stats sums usage records by day, model or agent (see StatsQuery).
	Stats(ctx context.Context, q StatsQuery) ([]StatsRow, error)

	// CreateCheckpoint stores a checkpoint and returns it as stored (ID
	// generated when empty, zero CreatedAt set to now, RestoredAt
	// ignored). Project must be absolute; SessionID may be empty.
	CreateCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error)
	// AddSnapshot stores the state of one file before a change. Only the
	// first snapshot of a path in a checkpoint is kept (it is the state to
	// restore); later ones return added == false and change nothing.
	AddSnapshot(ctx context.Context, checkpointID string, f FileSnapshot) (added bool, err error)
	// SetAfterHashes records, per path, the hashes of the states Odin left
	// the file in (each recorded before its write, so a crash mid-change
	// is still recognised), so a later restore can tell whether someone
	// else changed it since. A path with no snapshot is ErrNotFound and nothing
	// is changed.
	SetAfterHashes(ctx context.Context, checkpointID string, hashes map[string]string) error
	// Checkpoint returns one checkpoint, or ErrNotFound.
	Checkpoint(ctx context.Context, id string) (Checkpoint, error)
	// Checkpoints lists the project's checkpoints, newest first.
	Checkpoints(ctx context.Context, project string) ([]Checkpoint, error)
	// Snapshots returns a checkpoint's file snapshots ordered by path.
	Snapshots(ctx context.Context, checkpointID string) ([]FileSnapshot, error)
	// LatestUnrestored returns the project's newest checkpoint not yet
	// restored (what `odin undo` restores), or ErrNotFound.
	// A change set with no file (its first snapshot failed) is skipped.
	LatestUnrestored(ctx context.Context, project string) (Checkpoint, error)
	// MarkRestored sets the checkpoint's RestoredAt (zero at is now).
	MarkRestored(ctx context.Context, id string, at time.Time) error

	// CacheGet returns the value stored under key and when it was stored;
	// ok is false (and err nil) when there is none.
	CacheGet(ctx context.Context, key string) (value []byte, storedAt time.Time, ok bool, err error)
	// CachePut stores value under key, replacing any previous value.
	CachePut(ctx context.Context, key string, value []byte, at time.Time) error
	// CachePrune deletes the entries stored before olderThan and returns how
	// many it deleted.
	CachePrune(ctx context.Context, olderThan time.Time) (int64, error)

	// PutAgentRun stores or replaces one entry of a session's agent-run
	// registry (zero UpdatedAt is now). ErrNotFound for no session,
	// ErrInvalid for an empty ID or data that is not JSON.
	PutAgentRun(ctx context.Context, r AgentRunRecord) error
	// AgentRuns returns a session's agent-run entries in the order they
	// were first stored.
	AgentRuns(ctx context.Context, sessionID string) ([]AgentRunRecord, error)

	// Import stores whole sessions as Export produced them, keeping their
	// IDs, sequence numbers, times and totals, all in one transaction.
	// Parents must come before their children. A session or message ID
	// already present is ErrExists and nothing is stored.
	Import(ctx context.Context, archives []SessionArchive) error

	// Close releases the store. Calls after Close fail.
	Close() error
}

// Agent names the Orchestrator in Session.Agent and usage records;
// specialists use their roster name.
const AgentOrchestrator = "orchestrator"

// Session is one conversation: the Orchestrator's (a root session) or a
// specialist's transcript (a child session with ParentID set).
type Session struct {
	ID       string `json:"id"`
	ParentID string `json:"parent_id,omitempty"`
	// Project is the absolute project root the session works in.
	Project string `json:"project"`
	Title   string `json:"title,omitempty"`
	// Agent is AgentOrchestrator or the specialist's name.
	Agent     string    `json:"agent,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Totals, maintained by AddUsage (children's spend included).
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	Cost             float64 `json:"cost"`
	// SummaryMessageID is set by AppendSummary after a compaction.
	SummaryMessageID string `json:"summary_message_id,omitempty"`
	MessageCount     int64  `json:"message_count"`
}

// SessionQuery selects sessions for Sessions.
type SessionQuery struct {
	// Project restricts the list to one project; empty lists all.
	Project string
	// Children includes child (specialist) sessions; by default only root
	// sessions are listed.
	Children bool
	// Limit caps the number returned; 0 means no cap.
	Limit int
}

// SessionUpdate names the session fields to change; nil fields are kept.
type SessionUpdate struct {
	Title *string
	Mode  *string
	Model *string
}

// Message is one stored message: an ordered list of typed parts.
type Message struct {
	ID        string
	SessionID string
	// Seq orders a session's messages: 1, 2, 3... assigned on append.
	Seq       int64
	Role      llm.Role
	Model     string
	CreatedAt time.Time
	UpdatedAt time.Time
	Parts     []Part
	// InputID is the input a user message was stored for (Inputs), set
	// on append and kept; empty for other messages.
	InputID string
	// Interrupted marks a reply cut off by a crash (Inputs.MarkInterrupted):
	// kept for the transcript, left out of Messages.
	Interrupted bool
}

// ToolRecord is one entry of the tool history: what a tool was asked and
// what it did.
type ToolRecord struct {
	SessionID string `json:"session_id"`
	// MessageID is the assistant message holding the call, if known.
	MessageID string        `json:"message_id,omitempty"`
	CallID    string        `json:"call_id"`
	Name      string        `json:"name"`
	Agent     string        `json:"agent,omitempty"`
	Input     string        `json:"input,omitempty"`
	Output    string        `json:"output,omitempty"`
	IsError   bool          `json:"is_error,omitempty"`
	Files     []string      `json:"files,omitempty"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	At        time.Time     `json:"at"`
}

// Todo is one item of a session's todo list.
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"` // pending, in_progress, completed
}

// UsageRecord is the accounting of one model call.
type UsageRecord struct {
	// SessionID is empty on records whose session was deleted.
	SessionID        string    `json:"session_id"`
	Project          string    `json:"project"`
	Agent            string    `json:"agent"`
	Model            string    `json:"model"`
	PromptTokens     int64     `json:"prompt_tokens"`
	CompletionTokens int64     `json:"completion_tokens"`
	CachedTokens     int64     `json:"cached_tokens"`
	ReasoningTokens  int64     `json:"reasoning_tokens"`
	Cost             float64   `json:"cost"`
	At               time.Time `json:"at"`
	// Parts is the call's token ledger (estimated tokens per prompt part,
	// cached or not); nil for calls recorded without one.
	Parts []UsagePart `json:"parts,omitempty"`
}

// UsagePart is one part of a call's token ledger: "system", "tools",
// "history", "context" or "input", its estimated tokens and how many of
// them the provider's prefix cache served.
type UsagePart struct {
	Part   string `json:"part"`
	Tokens int64  `json:"tokens"`
	Cached int64  `json:"cached,omitempty"`
}

// Stats groupings.
const (
	GroupByDay   = "day"
	GroupByModel = "model"
	GroupByAgent = "agent"
	// GroupByPart sums the token ledgers of the calls: one row per prompt
	// part (system, tools, history, context, input), with PromptTokens and
	// CachedTokens its estimated and cached tokens and Calls the calls
	// whose prompt had that part.
	GroupByPart = "part"
)

// StatsQuery selects and groups usage records for Stats.
type StatsQuery struct {
	// Project restricts to one project; empty counts every project.
	Project string
	// Since keeps records at or after it; zero keeps all.
	Since time.Time
	// GroupBy is GroupByDay, GroupByModel, GroupByAgent or GroupByPart.
	GroupBy string
	// Location is the time zone days are cut in; nil means time.Local.
	Location *time.Location
}

// StatsRow is the sum of the usage records sharing Key: a day
// ("2006-01-02"), a model or an agent. Stats returns days in ascending
// order and models and agents by decreasing cost, then key.
type StatsRow struct {
	Key              string  `json:"key"`
	Calls            int64   `json:"calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	ReasoningTokens  int64   `json:"reasoning_tokens"`
	Cost             float64 `json:"cost"`
}

// Checkpoint is the state of the files one change set touched, taken
// before each was first changed, for `odin undo`.
type Checkpoint struct {
	ID        string
	SessionID string
	Project   string
	Label     string
	CreatedAt time.Time
	// RestoredAt is zero until the checkpoint is restored.
	RestoredAt time.Time
	// Files is the number of snapshots (filled on read).
	Files int
}

// FileSnapshot is one file as it was before a change set touched it.
type FileSnapshot struct {
	// Path is absolute.
	Path string
	// Existed is false for a file the change set created; restoring then
	// deletes it.
	Existed bool
	Mode    fs.FileMode
	Content []byte
	// HashAfter holds the hashes of the states Odin left the file in,
	// space-separated (checkpoint.JoinHashes; empty until SetAfterHashes).
	HashAfter string
}

// SessionArchive is a session with everything recorded in it, as Export
// returns it and Import stores it.
type SessionArchive struct {
	Session  Session
	Messages []Message
	Tools    []ToolRecord
	Todos    []Todo
	Usage    []UsageRecord
}

// Batcher is a store that can run several writes in one transaction
// (SQLite and PostgreSQL): a commit is most of a small write's cost.
type Batcher interface {
	Batch(ctx context.Context, fn func(context.Context) error) error
}

// InBatch runs fn, the writes to st, in one transaction when st can
// batch them, and as it is otherwise.
func InBatch(ctx context.Context, st any, fn func(context.Context) error) error {
	if b, ok := st.(Batcher); ok {
		return b.Batch(ctx, fn)
	}
	return fn(ctx)
}
