package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// journal writes a session's history to the store in order, off the
// actors' mailboxes: actors enqueue writes and never wait for the disk.
// Each write is its own committed transaction, so a kill -9 loses at most
// what was still queued (milliseconds of work), and the store repairs
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
	queue   []func(context.Context, store.Store) error
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

// do enqueues a write. Writes run in the order they were enqueued.
func (j *journal) do(fn func(context.Context, store.Store) error) {
	if j == nil {
		return
	}
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return
	}
	j.queue = append(j.queue, fn)
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
		for i, fn := range batch {
			err := j.write(fn)
			if err == nil {
				continue
			}
			if !retryableWrite(err) {
				j.giveUp(1, err)
				continue
			}
			// Keep the order: the failed write and all after it go back
			// to the head of the queue.
			j.mu.Lock()
			j.queue = append(append([]func(context.Context, store.Store) error(nil), batch[i:]...), j.queue...)
			first := j.failing == nil
			if first {
				j.failing = err
			}
			j.mu.Unlock()
			j.log.Error().Err(err).Int("pending", len(batch)-i).Msg("journal: write failed; kept for retry")
			if first && j.report != nil {
				j.report(err)
			}
			failed = true
			break
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
			Parts: []store.Part{store.ToolResultPart{ToolCallID: r.msg.ToolCallID, Name: r.msg.Name, Content: r.msg.Content,
				IsError: r.isError, Cancelled: r.cancelled}}})
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
	}
	return sm
}
