package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// closeReason is the Cancel reason of Session.Close. A turn it cuts off is
// not over for its input: the input stays accepted and the next open of
// the session resumes it (RecoverInputs).
const closeReason = "session closed"

// Accepted is the ledger's answer to Session.Accept.
type Accepted struct {
	// Input is the input as sent to the Orchestrator or, for a
	// duplicate, as first accepted (its Body and Mode are the first
	// delivery's).
	Input messages.UserMessage
	// State is store.InputAccepted or store.InputDone; empty without a
	// ledger (a store that keeps none, or no store).
	State string
	// Dup is true when the ID was accepted before: nothing was sent.
	Dup bool
}

// Accept queues an input under id, the caller's idempotency key (a new ID
// when empty). With a store that keeps an input ledger (store.Inputs), the
// input is recorded as accepted before it is queued, so it survives a
// crash (the next open resumes it), and an id accepted before is not run
// again: the first delivery's state comes back with Dup set. It blocks for
// that one write; errors are the store's, and nothing is queued then.
func (s *Session) Accept(ctx context.Context, id, body string, mode messages.Mode, images []messages.Image) (Accepted, error) {
	if id == "" {
		id = s.deps.NewID()
	}
	m := messages.UserMessage{ID: id, Body: body, Mode: mode, At: s.deps.now(), Images: images}
	ix, ok := s.deps.Store.(store.Inputs)
	if !ok {
		s.system.Root.Send(s.orch, &m)
		return Accepted{Input: m}, nil
	}
	var in store.Input
	var dup bool
	accept := func(ctx context.Context) (err error) {
		in, dup, err = ix.AcceptInput(ctx, store.Input{ID: id, SessionID: s.ID, Body: body, Mode: string(mode), CreatedAt: m.At})
		return err
	}
	// Through Batch, so that a grouping store (store.Grouped, odin serve
	// on SQLite) commits it with the journals' writes of the moment
	// rather than queuing a transaction of its own on the one writer.
	err := store.InBatch(ctx, s.deps.Store, accept)
	if err != nil {
		if errors.Is(err, store.ErrFenced) && s.j != nil {
			// The ledger write was the first to meet a later claim: the
			// session stops and says so, as when a journal write meets it.
			s.j.fence(err)
		}
		return Accepted{}, fmt.Errorf("actors: accept input: %w", err)
	}
	if dup {
		return Accepted{Input: inputMessage(in), State: in.State, Dup: true}, nil
	}
	s.system.Root.Send(s.orch, &m)
	return Accepted{Input: m, State: in.State}, nil
}

// inputMessage is a stored input as the Orchestrator takes it.
func inputMessage(in store.Input) messages.UserMessage {
	return messages.UserMessage{ID: in.ID, Body: in.Body, Mode: messages.Mode(in.Mode), At: in.CreatedAt, Agent: in.Agent}
}

// Recovery is what opening a session found of the turns a process that
// died (or a session closed mid-turn) left unfinished; see RecoverInputs.
type Recovery struct {
	// Inputs are to run, in order: a turn to continue (Resumed set)
	// first, then inputs that never started.
	Inputs []messages.UserMessage
	// Interrupted counts partial replies marked interrupted; Finished
	// inputs found with their final reply stored and marked done.
	Interrupted, Finished int
}

// Resuming is the number of turns the recovery runs.
func (r Recovery) Resuming() int { return len(r.Inputs) }

// RecoverInputs settles the session's accepted inputs (store.Inputs) that
// are not done, before its history is read for the model: an input with
// no stored user message is to be submitted again; one whose last reply
// is stored complete and without tool calls is marked done, with no model
// call; otherwise its turn is to be continued, and a trailing reply that
// never finished streaming (or was cut off) is first marked interrupted,
// which keeps it in the transcript and out of the model's view. Call it
// while holding the session's lease or claim. A store without a ledger
// has nothing to recover.
func RecoverInputs(ctx context.Context, st store.Store, sessionID string) (Recovery, error) {
	var rec Recovery
	ix, ok := st.(store.Inputs)
	if !ok {
		return rec, nil
	}
	pending, err := ix.PendingInputs(ctx, sessionID)
	if err != nil || len(pending) == 0 {
		return rec, err
	}
	all, err := st.AllMessages(ctx, sessionID)
	if err != nil {
		return rec, err
	}
	var resumed, fresh []messages.UserMessage
	for _, in := range pending {
		at := -1
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].InputID == in.ID && all[i].Role == llm.RoleUser {
				at = i
				break
			}
		}
		if at < 0 {
			fresh = append(fresh, inputMessage(in))
			continue
		}
		var last *store.Message
		for i := len(all) - 1; i > at; i-- {
			if !all[i].Interrupted {
				last = &all[i]
				break
			}
		}
		if last != nil && last.Role == llm.RoleAssistant {
			finish, finished := finishOf(*last)
			switch {
			case !finished || finish == finishCancelled || finish == finishError:
				if err := ix.MarkInterrupted(ctx, last.ID); err != nil {
					return rec, err
				}
				rec.Interrupted++
			case len(last.ToolCalls()) == 0:
				if err := ix.MarkInputDone(ctx, sessionID, in.ID); err != nil {
					return rec, err
				}
				rec.Finished++
				continue
			}
		}
		m := inputMessage(in)
		m.Resumed = true
		resumed = append(resumed, m)
	}
	rec.Inputs = append(resumed, fresh...)
	return rec, nil
}

// finishOf is the finish reason a stored reply ended with; false when it
// has none (it was still streaming).
func finishOf(m store.Message) (llm.FinishReason, bool) {
	for i := len(m.Parts) - 1; i >= 0; i-- {
		if f, ok := m.Parts[i].(store.FinishPart); ok {
			return f.Reason, true
		}
	}
	return "", false
}

// Resume queues the recovery's inputs, in order, as if submitted now; the
// front end calls it once it listens to the session's events.
func (s *Session) Resume(r Recovery) {
	for i := range r.Inputs {
		m := r.Inputs[i]
		s.system.Root.Send(s.orch, &m)
	}
}
