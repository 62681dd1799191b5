package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// journal writes a session's history to the store in order, off the
// actors' mailboxes: actors enqueue writes and never wait for the disk.
// What is queued is written in one transaction when the store can batch
// (each write in its own savepoint), else write by write; either way a
// kill -9 loses at most what was still queued (milliseconds of work), and
// the store repairs
// tool calls left without a result. A nil *journal does nothing.
//
// A failed write (a full disk, a read-only database) is never skipped: it
// stays at the head of the queue with everything after it and is retried,
// so the stored history is always a prefix of the live one — never a tool
// call without its result — and is complete again once space returns.
// Failures and recoveries go to report; what could still not be written
// at close is close's error (ErrNotSaved).
type journal struct {
	st  store.Store
	log zerolog.Logger
	// report, if set, is told of a write failure (once per episode) and of
	// the recovery (nil). It must not block.
	report func(error)

	mu      sync.Mutex
	queue   []journalEntry
	wake    chan struct{}
	closed  bool
	stopped chan struct{}
	failing error // the current episode's first error, nil when healthy
	lost    int   // writes given up on
	lastErr error // the error of the last write given up on
}

// ErrNotSaved: part of the session's history could not be written to the
// store (Session.Close wraps it with the cause).
var ErrNotSaved = errors.New("the session could not be saved")

// journalRetry is the wait between attempts of a failed write while the
// session runs; closeAttempts bound the retries at close.
const (
	journalRetry  = time.Second
	closeAttempts = 3
)

func newJournal(st store.Store, log zerolog.Logger) *journal {
	if st == nil {
		return nil
	}
	j := &journal{st: st, log: log, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go j.run()
	return j
}

// journalEntry is one queued write. A reading entry runs on its own, once
// everything queued before it is committed: it may read through the
// store's read connections, which do not see a batch before its commit.
type journalEntry struct {
	fn      func(context.Context, store.Store) error
	reading bool
}

// do enqueues a write. Writes run in the order they were enqueued.
func (j *journal) do(fn func(context.Context, store.Store) error) {
	j.enqueue(journalEntry{fn: fn})
}

// afterWrites enqueues fn to run once every write queued before it is
// committed, never batched with others: fn may read what they wrote.
func (j *journal) afterWrites(fn func(context.Context, store.Store) error) {
	j.enqueue(journalEntry{fn: fn, reading: true})
}

func (j *journal) enqueue(e journalEntry) {
	if j == nil {
		return
	}
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return
	}
	j.queue = append(j.queue, e)
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

func (j *journal) run() {
	defer close(j.stopped)
	closeTries := 0
	for {
		j.mu.Lock()
		batch := j.queue
		j.queue = nil
		closed := j.closed
		j.mu.Unlock()
		failed := false
		if pending, err := j.writeAll(batch); err != nil {
			// Keep the order: the failed write and all after it go back
			// to the head of the queue.
			j.mu.Lock()
			j.queue = append(pending, j.queue...)
			first := j.failing == nil
			if first {
				j.failing = err
			}
			j.mu.Unlock()
			j.log.Error().Err(err).Int("pending", len(pending)).Msg("journal: write failed; kept for retry")
			if first && j.report != nil {
				j.report(err)
			}
			failed = true
		}
		if !failed {
			j.mu.Lock()
			recovered := j.failing != nil && len(batch) > 0
			if recovered {
				j.failing = nil
			}
			j.mu.Unlock()
			if recovered {
				j.log.Info().Msg("journal: writes succeed again; the history is complete")
				if j.report != nil {
					j.report(nil)
				}
			}
			if len(batch) > 0 {
				continue
			}
			if closed {
				return
			}
			<-j.wake
			continue
		}
		if closed {
			closeTries++
			if closeTries >= closeAttempts {
				j.mu.Lock()
				rest := len(j.queue)
				j.queue = nil
				err := j.failing
				j.mu.Unlock()
				j.giveUp(rest, err)
				return
			}
		}
		t := time.NewTimer(journalRetry)
		select {
		case <-j.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// batcher is a store that can run several writes in one transaction
// (store.SQLite): a commit is most of a small write's cost, and a fan-out
// of specialists queues dozens of writes at once.
type batcher interface {
	Batch(ctx context.Context, fn func(context.Context) error) error
}

// writeAll writes entries in order: runs of writes in one transaction when
// the store can batch (each write in its own savepoint), reading entries
// alone. A write the store rejects as such is given up; at the first that
// failed for a reason that may clear (or a batch whose commit failed), it
// returns what is left to retry, in order: the failed writes and those
// after them, never a given-up one.
func (j *journal) writeAll(entries []journalEntry) ([]journalEntry, error) {
	b, canBatch := j.st.(batcher)
	for i := 0; i < len(entries); {
		n := 1
		if canBatch && !entries[i].reading {
			for i+n < len(entries) && !entries[i+n].reading {
				n++
			}
		}
		var pending []journalEntry
		var err error
		if n == 1 {
			if err = j.write(entries[i].fn); err != nil && !retryableWrite(err) {
				j.giveUp(1, err)
				err = nil
			} else if err != nil {
				pending = entries[i : i+1]
			}
		} else {
			pending, err = j.writeBatch(b, entries[i:i+n])
		}
		if err != nil {
			return append(append([]journalEntry(nil), pending...), entries[i+n:]...), err
		}
		i += n
	}
	return nil, nil
}

// writeBatch writes entries in one transaction; see writeAll.
func (j *journal) writeBatch(b batcher, entries []journalEntry) ([]journalEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var done, pending []journalEntry
	var rejected []error
	var failure error
	err := b.Batch(ctx, func(ctx context.Context) error {
		for k, e := range entries {
			// Each entry is all or nothing (a savepoint), so a retry
			// never repeats half of one.
			err := b.Batch(ctx, func(ctx context.Context) error { return e.fn(ctx, j.st) })
			switch {
			case err == nil:
				done = append(done, e)
			case !retryableWrite(err):
				rejected = append(rejected, err)
			default:
				pending, failure = entries[k:], err
				return nil // commit what went before
			}
		}
		return nil
	})
	for _, e := range rejected {
		j.giveUp(1, e)
	}
	if err != nil {
		// Nothing of the batch is stored.
		return append(done, pending...), err
	}
	return pending, failure
}

// write runs one queued write with a deadline.
func (j *journal) write(fn func(context.Context, store.Store) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return fn(ctx, j.st)
}

// giveUp counts n writes as lost to err.
func (j *journal) giveUp(n int, err error) {
	if n == 0 {
		return
	}
	j.log.Error().Err(err).Int("writes", n).Msg("journal: writes lost")
	j.mu.Lock()
	j.lost += n
	j.lastErr = err
	j.mu.Unlock()
	if j.report != nil {
		j.report(err)
	}
}

// retryableWrite tells failures of the disk or the database file (which
// may clear) from writes the store rejects as such (which never will).
func retryableWrite(err error) bool {
	return !errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrExists)
}

// close writes what is queued (retrying a failing write a few times) and
// stops. It returns an ErrNotSaved error when writes were lost.
func (j *journal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
	<-j.stopped
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lost > 0 {
		return fmt.Errorf("%w: %d writes lost: %v", ErrNotSaved, j.lost, j.lastErr)
	}
	return nil
}

// appendMessage stores one conversation entry of a session.
func (j *journal) appendMessage(sessionID string, m llm.Message, model string, finish llm.FinishReason, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.AppendMessage(ctx, ToStoreMessage(sessionID, m, model, finish, at))
		return err
	})
}

// appendResult stores a tool result with its error and cancelled flags.
func (j *journal) appendResult(sessionID string, r toolResult, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.AppendMessage(ctx, store.Message{SessionID: sessionID, Role: llm.RoleTool, CreatedAt: at,
			Parts: append([]store.Part{store.ToolResultPart{ToolCallID: r.msg.ToolCallID, Name: r.msg.Name, Content: r.msg.Content,
				IsError: r.isError, Cancelled: r.cancelled}}, imageParts(r.msg.Images)...)})
		return err
	})
}

// createChild records a specialist's transcript as a child session.
func (j *journal) createChild(parent, id, agent, title, mode, model, project string, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.CreateSession(ctx, store.Session{ID: id, ParentID: parent, Project: project, Agent: agent,
			Title: title, Mode: mode, Model: model, CreatedAt: at, UpdatedAt: at})
		return err
	})
}

func (j *journal) setTitle(sessionID, title string) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.UpdateSession(ctx, sessionID, store.SessionUpdate{Title: &title})
	})
}

func (j *journal) todos(sessionID string, todos []messages.Todo) {
	j.do(func(ctx context.Context, st store.Store) error {
		list := make([]store.Todo, len(todos))
		for i, t := range todos {
			list[i] = store.Todo{ID: t.ID, Content: t.Content, Status: t.Status}
		}
		return st.SetTodos(ctx, sessionID, list)
	})
}

// toolResult is a tool message with the flags the store keeps.
type toolResult struct {
	msg       llm.Message
	isError   bool
	cancelled bool
}

func (j *journal) usage(sessionID, agent, model string, u messages.Usage, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.AddUsage(ctx, store.UsageRecord{SessionID: sessionID, Agent: agent, Model: model,
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens,
			ReasoningTokens: u.ReasoningTokens, Cost: u.Cost, At: at})
	})
}

func (j *journal) tool(sessionID, agent string, o callOutcome, files []string, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.RecordTool(ctx, store.ToolRecord{SessionID: sessionID, CallID: o.call.ID, Name: o.call.Name, Agent: agent,
			Input: o.call.Arguments, Output: o.result.Output, IsError: o.result.IsError, Files: files, Elapsed: o.elapsed, At: at})
	})
}

// ToStoreMessage converts a conversation entry to its stored form.
func ToStoreMessage(sessionID string, m llm.Message, model string, finish llm.FinishReason, at time.Time) store.Message {
	sm := store.Message{SessionID: sessionID, Role: m.Role, Model: model, CreatedAt: at}
	switch m.Role {
	case llm.RoleTool:
		sm.Parts = append(sm.Parts, store.ToolResultPart{ToolCallID: m.ToolCallID, Name: m.Name, Content: m.Content})
		sm.Parts = append(sm.Parts, imageParts(m.Images)...)
	case llm.RoleAssistant:
		if m.Reasoning != "" {
			sm.Parts = append(sm.Parts, store.ReasoningPart{Text: m.Reasoning})
		}
		if m.Content != "" {
			sm.Parts = append(sm.Parts, store.TextPart{Text: m.Content})
		}
		for _, c := range m.ToolCalls {
			sm.Parts = append(sm.Parts, store.ToolCallPart{ID: c.ID, Name: c.Name, Input: c.Arguments, Finished: true, Extra: string(c.Extra)})
		}
		if finish != "" {
			sm.Parts = append(sm.Parts, store.FinishPart{Reason: finish, Time: at})
		}
	default:
		sm.Parts = append(sm.Parts, store.TextPart{Text: m.Content})
		sm.Parts = append(sm.Parts, imageParts(m.Images)...)
	}
	return sm
}

// imageParts are the stored form of a message's images.
func imageParts(images []llm.Image) []store.Part {
	out := make([]store.Part, len(images))
	for i, im := range images {
		out[i] = store.ImagePartOf(im)
	}
	return out
}

// Finish reasons of a reply cut short: by Cancel (seed 002's "Canceled"),
// or by a failed model call.
const (
	finishCancelled llm.FinishReason = "cancelled"
	finishError     llm.FinishReason = "error"
)

// Throttle of streamingReply: the stored reply is rewritten at most this
// often, or when this much new text arrived, whichever comes first.
const (
	streamFlushEvery = 250 * time.Millisecond
	streamFlushBytes = 2048
	streamFlushCall  = streamFlushBytes / 16
)

// streamingReply persists an assistant reply while it streams: the first
// delta appends the message to the store and later ones update it
// (store.UpdateMessage), throttled, so a crash or kill -9 mid-reply keeps
// the text received so far. Deltas arrive in the model call's goroutine
// and the end (finish or cancel) in the actor, so its methods lock; the
// writes themselves run in the journal's goroutine, in order, which is the
// only place id is touched.
type streamingReply struct {
	j       *journal
	session string
	model   string
	at      time.Time

	mu        sync.Mutex
	text      strings.Builder
	reasoning strings.Builder
	calls     []llm.ToolCall // announced calls; arguments may be incomplete
	lastFlush time.Time
	unflushed int
	written   bool // a write was enqueued
	done      bool

	id string // the stored message, once appended (journal goroutine only)
}

func (j *journal) startReply(sessionID, model string, at time.Time) *streamingReply {
	return &streamingReply{j: j, session: sessionID, model: model, at: at}
}

// event records a streamed delta and writes the reply when the throttle
// allows.
func (r *streamingReply) event(ev llm.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	switch ev.Kind {
	case llm.EventText:
		r.text.WriteString(ev.Text)
		r.unflushed += len(ev.Text)
	case llm.EventReasoning:
		r.reasoning.WriteString(ev.Text)
		r.unflushed += len(ev.Text)
	case llm.EventRetry:
		// The call starts over: what the failed attempt sent is not
		// part of the reply; the next write replaces it.
		r.text.Reset()
		r.reasoning.Reset()
		r.calls = nil
		return
	case llm.EventToolCall:
		if ev.ToolCall != nil {
			r.calls = append(r.calls, llm.ToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name})
			// A call counts as streamFlushCall bytes: a write for each of
			// them would store the growing list again per call, quadratic
			// in a fan-out's 256 delegations.
			r.unflushed += streamFlushCall
		}
	default:
		return
	}
	now := time.Now()
	if !r.written || now.Sub(r.lastFlush) >= streamFlushEvery || r.unflushed >= streamFlushBytes {
		r.flushLocked(r.partialLocked(), "", now)
	}
}

// partialLocked is the reply received so far. Calls whose arguments had
// not finished streaming are stored with {} (valid JSON) and unfinished.
func (r *streamingReply) partialLocked() store.Message {
	m := store.Message{SessionID: r.session, Role: llm.RoleAssistant, Model: r.model, CreatedAt: r.at}
	if s := r.reasoning.String(); s != "" {
		m.Parts = append(m.Parts, store.ReasoningPart{Text: s})
	}
	if s := r.text.String(); s != "" {
		m.Parts = append(m.Parts, store.TextPart{Text: s})
	}
	for _, c := range r.calls {
		m.Parts = append(m.Parts, store.ToolCallPart{ID: c.ID, Name: c.Name, Input: "{}"})
	}
	return m
}

// flushLocked enqueues a write of m: an append the first time, an update
// of the same message afterwards. finish, when set, is appended as the
// reply's FinishPart.
func (r *streamingReply) flushLocked(m store.Message, finish llm.FinishReason, now time.Time) {
	if finish != "" {
		m.Parts = append(m.Parts, store.FinishPart{Reason: finish, Time: now})
	}
	r.written, r.lastFlush, r.unflushed = true, now, 0
	r.j.do(func(ctx context.Context, st store.Store) error {
		if r.id != "" {
			m.ID = r.id
			err := st.UpdateMessage(ctx, m)
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			// The append was in a batch whose commit failed: append
			// again, with the same ID.
		}
		stored, err := st.AppendMessage(ctx, m)
		if err != nil {
			return err
		}
		r.id = stored.ID
		return nil
	})
}

// finish stores the complete reply in place of the partial one.
func (r *streamingReply) finish(m llm.Message, finish llm.FinishReason, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	sm := ToStoreMessage(r.session, m, r.model, "", r.at)
	r.flushLocked(sm, finish, at)
}

// cut ends a reply cut short (finishCancelled or finishError): what
// streamed is stored with that finish, and every call it announced gets a
// cancelled result (seed 002), so the stored history stays valid. It
// returns the partial reply and the results for the live history; ok is
// false when nothing had streamed (no message is stored then) or the reply
// already ended.
func (r *streamingReply) cut(why llm.FinishReason, at time.Time) (reply llm.Message, results []toolResult, ok bool) {
	if r == nil {
		return llm.Message{}, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return llm.Message{}, nil, false
	}
	r.done = true
	if r.text.Len() == 0 && r.reasoning.Len() == 0 && len(r.calls) == 0 {
		return llm.Message{}, nil, false
	}
	r.flushLocked(r.partialLocked(), why, at)
	reply = llm.Message{Role: llm.RoleAssistant, Content: r.text.String(), Reasoning: r.reasoning.String()}
	for _, c := range r.calls {
		call := llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: "{}"}
		reply.ToolCalls = append(reply.ToolCalls, call)
		results = append(results, cancelledMessage(call))
	}
	return reply, results, true
}

// queued is how many writes wait in the queue now, not counting a batch
// being written (read-only, for odin serve's metrics).
func (j *journal) queued() int {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.queue)
}
