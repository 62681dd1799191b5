package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Input states: accepted when stored, done once its turn ended (its final
// reply stored in the same transaction, or the turn failed or was
// cancelled by the user).
const (
	InputAccepted = "accepted"
	InputDone     = "done"
)

// Input is one input of a session, stored under the ID its caller chose
// (an Idempotency-Key), so that the same input delivered twice runs once
// and a turn a crash interrupted can be found and finished.
type Input struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	State     string    `json:"state"`
	Body      string    `json:"body,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Inputs is the input ledger of a Store (both backends). Every write is
// fenced like the Store's when it goes through a Fenced handle.
type Inputs interface {
	// AcceptInput stores in as accepted (zero CreatedAt is now). When the
	// session already holds an input with in.ID, nothing is written and
	// the stored input is returned with dup true: concurrent deliveries
	// of one ID agree on one winner. ErrInvalid for an empty ID,
	// ErrNotFound for no session.
	AcceptInput(ctx context.Context, in Input) (stored Input, dup bool, err error)
	// Input returns one input, or ErrNotFound.
	Input(ctx context.Context, sessionID, id string) (Input, error)
	// PendingInputs returns the session's inputs still accepted, in the
	// order they were accepted.
	PendingInputs(ctx context.Context, sessionID string) ([]Input, error)
	// PendingSessions returns the IDs of the sessions holding accepted
	// inputs.
	PendingSessions(ctx context.Context) ([]string, error)
	// FinishInput stores m, the final reply of input inputID, and marks
	// the input done, in one transaction: a crash leaves both or neither.
	// m replaces the stored message m.ID (a reply persisted while it
	// streamed) or, when there is none, is appended as AppendMessage
	// would. An input not in the ledger (submitted without an ID to keep)
	// is no error. ErrNotFound for no session.
	FinishInput(ctx context.Context, inputID string, m Message) (Message, error)
	// MarkInputDone marks an input done; done already, or not in the
	// ledger, is no error.
	MarkInputDone(ctx context.Context, sessionID, id string) error
	// MarkInterrupted marks a stored message as a reply cut off by a
	// crash: AllMessages and exports keep it (with Interrupted set),
	// Messages leaves it out of the model's view. ErrNotFound if absent.
	MarkInterrupted(ctx context.Context, messageID string) error
}

var _ Inputs = (*SQLite)(nil)

const inputColumns = `id, session_id, state, body, mode, agent, created_at, updated_at`

func scanInput(row interface{ Scan(...any) error }) (Input, error) {
	var in Input
	var created, updated int64
	if err := row.Scan(&in.ID, &in.SessionID, &in.State, &in.Body, &in.Mode, &in.Agent, &created, &updated); err != nil {
		return Input{}, err
	}
	in.CreatedAt, in.UpdatedAt = fromNanos(created), fromNanos(updated)
	return in, nil
}

// AcceptInput implements Inputs.
func (s *SQLite) AcceptInput(ctx context.Context, in Input) (Input, bool, error) {
	if in.ID == "" {
		return Input{}, false, fmt.Errorf("store: accept input: empty ID: %w", ErrInvalid)
	}
	var out Input
	var dup bool
	err := s.write(ctx, func(tx *wtx) error {
		if _, err := getSession(ctx, tx, in.SessionID); err != nil {
			return err
		}
		created := s.stamp(in.CreatedAt)
		// ON CONFLICT DO NOTHING decides between concurrent deliveries
		// of one ID in the database, not in a read before the write.
		res, err := tx.ExecContext(ctx, `INSERT INTO inputs (id, session_id, state, body, mode, agent, created_at, updated_at)
			VALUES (?, ?, 'accepted', ?, ?, ?, ?, ?) ON CONFLICT (session_id, id) DO NOTHING`,
			in.ID, in.SessionID, in.Body, in.Mode, in.Agent, created, created)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		dup = n == 0
		out, err = scanInput(tx.QueryRowContext(ctx, `SELECT `+inputColumns+` FROM inputs WHERE session_id = ? AND id = ?`, in.SessionID, in.ID))
		return err
	})
	if err != nil {
		return Input{}, false, fmt.Errorf("store: accept input: %w", err)
	}
	return out, dup, nil
}

// Input implements Inputs.
func (s *SQLite) Input(ctx context.Context, sessionID, id string) (Input, error) {
	in, err := scanInput(s.r.QueryRowContext(ctx, `SELECT `+inputColumns+` FROM inputs WHERE session_id = ? AND id = ?`, sessionID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Input{}, fmt.Errorf("store: input %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Input{}, fmt.Errorf("store: input: %w", err)
	}
	return in, nil
}

// PendingInputs implements Inputs.
func (s *SQLite) PendingInputs(ctx context.Context, sessionID string) ([]Input, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+inputColumns+` FROM inputs WHERE state = 'accepted' AND session_id = ?
		ORDER BY created_at, rowid`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: pending inputs: %w", err)
	}
	defer rows.Close()
	out := []Input{}
	for rows.Next() {
		in, err := scanInput(rows)
		if err != nil {
			return nil, fmt.Errorf("store: pending inputs: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pending inputs: %w", err)
	}
	return out, nil
}

// PendingSessions implements Inputs.
func (s *SQLite) PendingSessions(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT session_id FROM inputs WHERE state = 'accepted' ORDER BY session_id`)
	if err != nil {
		return nil, fmt.Errorf("store: pending sessions: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: pending sessions: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pending sessions: %w", err)
	}
	return out, nil
}

// FinishInput implements Inputs.
func (s *SQLite) FinishInput(ctx context.Context, inputID string, m Message) (Message, error) {
	parts, err := encodeParts(m.Parts)
	if err != nil {
		return Message{}, fmt.Errorf("store: finish input: %w", err)
	}
	out := m
	err = s.write(ctx, func(tx *wtx) error {
		replaced := false
		if m.ID != "" {
			now := s.now().UnixNano()
			res, err := tx.ExecContext(ctx, `UPDATE messages SET model = ?, parts = ?, updated_at = ? WHERE id = ? AND session_id = ?`,
				m.Model, parts, now, m.ID, m.SessionID)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			replaced = n > 0
		}
		if !replaced {
			if out, err = s.appendTx(ctx, tx, m); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE inputs SET state = 'done', updated_at = ? WHERE session_id = ? AND id = ?`,
			s.now().UnixNano(), m.SessionID, inputID)
		return err
	})
	if err != nil {
		return Message{}, fmt.Errorf("store: finish input %s: %w", inputID, err)
	}
	return out, nil
}

// MarkInputDone implements Inputs.
func (s *SQLite) MarkInputDone(ctx context.Context, sessionID, id string) error {
	err := s.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `UPDATE inputs SET state = 'done', updated_at = ? WHERE session_id = ? AND id = ? AND state <> 'done'`,
			s.now().UnixNano(), sessionID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: mark input done: %w", err)
	}
	return nil
}

// MarkInterrupted implements Inputs.
func (s *SQLite) MarkInterrupted(ctx context.Context, messageID string) error {
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE messages SET interrupted = 1 WHERE id = ?`, messageID)
		if err != nil {
			return err
		}
		return mustAffect(res, "message "+messageID)
	})
	if err != nil {
		return fmt.Errorf("store: mark interrupted: %w", err)
	}
	return nil
}

// The ledger's writes through a claim, each fenced like the Store's.

var _ Inputs = (*Fenced)(nil)

// ledger is the claimed store's input ledger: every store Claim returns a
// handle over keeps one (SQLite, Grouped and Postgres share the code).
func (h *Fenced) ledger() Inputs { return h.Store.(Inputs) }

// AcceptInput implements Inputs, fenced.
func (h *Fenced) AcceptInput(ctx context.Context, in Input) (Input, bool, error) {
	return h.ledger().AcceptInput(h.ctx(ctx), in)
}

// Input implements Inputs.
func (h *Fenced) Input(ctx context.Context, sessionID, id string) (Input, error) {
	return h.ledger().Input(ctx, sessionID, id)
}

// PendingInputs implements Inputs.
func (h *Fenced) PendingInputs(ctx context.Context, sessionID string) ([]Input, error) {
	return h.ledger().PendingInputs(ctx, sessionID)
}

// PendingSessions implements Inputs.
func (h *Fenced) PendingSessions(ctx context.Context) ([]string, error) {
	return h.ledger().PendingSessions(ctx)
}

// FinishInput implements Inputs, fenced.
func (h *Fenced) FinishInput(ctx context.Context, inputID string, m Message) (Message, error) {
	return h.ledger().FinishInput(h.ctx(ctx), inputID, m)
}

// MarkInputDone implements Inputs, fenced.
func (h *Fenced) MarkInputDone(ctx context.Context, sessionID, id string) error {
	return h.ledger().MarkInputDone(h.ctx(ctx), sessionID, id)
}

// MarkInterrupted implements Inputs, fenced.
func (h *Fenced) MarkInterrupted(ctx context.Context, messageID string) error {
	return h.ledger().MarkInterrupted(h.ctx(ctx), messageID)
}
