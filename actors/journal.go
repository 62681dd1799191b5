package actors

import (
	"context"
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
type journal struct {
	st  store.Store
	log zerolog.Logger

	mu      sync.Mutex
	queue   []func(context.Context, store.Store) error
	wake    chan struct{}
	closed  bool
	stopped chan struct{}
}

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
	for {
		j.mu.Lock()
		batch := j.queue
		j.queue = nil
		closed := j.closed
		j.mu.Unlock()
		for _, fn := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := fn(ctx, j.st); err != nil {
				j.log.Error().Err(err).Msg("journal: write failed")
			}
			cancel()
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-j.wake
	}
}

// close writes what is queued and stops.
func (j *journal) close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	select {
	case j.wake <- struct{}{}:
	default:
	}
	<-j.stopped
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
