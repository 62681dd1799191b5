package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/odin-code/odin/internal/llm"
)

// AppendMessage implements Store.
func (s *SQLite) AppendMessage(ctx context.Context, m Message) (Message, error) {
	var out Message
	err := s.write(ctx, func(tx *wtx) error {
		var err error
		out, err = s.appendTx(ctx, tx, m)
		return err
	})
	if err != nil {
		return Message{}, fmt.Errorf("store: append message: %w", err)
	}
	return out, nil
}

// AppendSummary implements Store.
func (s *SQLite) AppendSummary(ctx context.Context, m Message) (Message, error) {
	var out Message
	err := s.write(ctx, func(tx *wtx) error {
		var err error
		if out, err = s.appendTx(ctx, tx, m); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET summary_message_id = ? WHERE id = ?`, out.ID, out.SessionID)
		return err
	})
	if err != nil {
		return Message{}, fmt.Errorf("store: append summary: %w", err)
	}
	return out, nil
}

func (s *SQLite) appendTx(ctx context.Context, tx *wtx, m Message) (Message, error) {
	if !validRole(m.Role) {
		return Message{}, fmt.Errorf("role %q: %w", m.Role, ErrInvalid)
	}
	parts, err := encodeParts(m.Parts)
	if err != nil {
		return Message{}, err
	}
	if m.ID == "" {
		m.ID = s.newID()
	}
	created := s.stamp(m.CreatedAt)
	// On PostgreSQL this UPDATE also takes the session row's lock, which
	// orders concurrent appenders before the sequence number is drawn.
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = message_count + 1,
		updated_at = `+s.greatest()+`(updated_at, ?) WHERE id = ?`, created, m.SessionID)
	if err != nil {
		return Message{}, err
	}
	if err := mustAffect(res, "session "+m.SessionID); err != nil {
		return Message{}, err
	}
	// The sequence number is computed inside the insert, under the write
	// lock, so concurrent appenders (goroutines or processes) can never
	// draw the same one.
	// VALUES rather than INSERT ... SELECT: PostgreSQL infers the
	// placeholders' types from the target columns only there.
	cols, vals := "", ""
	args := []any{m.ID, m.SessionID, m.SessionID, string(m.Role), m.Model, created, created, parts}
	if m.InputID != "" {
		// Named only when set: the statement every other message
		// uses stays the one it was.
		cols, vals, args = ", input_id", ", ?", append(args, m.InputID)
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO messages (id, session_id, seq, role, model, created_at, updated_at, parts`+cols+`)
		VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?), ?, ?, ?, ?, ?`+vals+`)
		RETURNING seq`, args...).Scan(&m.Seq)
	if isConstraint(err) {
		return Message{}, fmt.Errorf("message %s: %w", m.ID, ErrExists)
	}
	if err != nil {
		return Message{}, err
	}
	m.CreatedAt = fromNanos(created)
	m.UpdatedAt = m.CreatedAt
	m.Parts = append([]Part(nil), m.Parts...)
	return m, nil
}

// UpdateMessage implements Store.
func (s *SQLite) UpdateMessage(ctx context.Context, m Message) error {
	parts, err := encodeParts(m.Parts)
	if err != nil {
		return fmt.Errorf("store: update message %s: %w", m.ID, err)
	}
	err = s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE messages SET model = ?, parts = ?, updated_at = ? WHERE id = ?`,
			m.Model, parts, s.now().UnixNano(), m.ID)
		if err != nil {
			return err
		}
		return mustAffect(res, "message "+m.ID)
	})
	if err != nil {
		return fmt.Errorf("store: update message: %w", err)
	}
	return nil
}

// AllMessages implements Store.
func (s *SQLite) AllMessages(ctx context.Context, sessionID string) ([]Message, error) {
	msgs, err := loadMessages(ctx, s.r, sessionID, false)
	if err != nil {
		return nil, fmt.Errorf("store: all messages: %w", err)
	}
	return msgs, nil
}

// Messages implements Store.
func (s *SQLite) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	msgs, err := loadMessages(ctx, s.r, sessionID, true)
	if err != nil {
		return nil, fmt.Errorf("store: messages: %w", err)
	}
	if len(danglingCalls(msgs)) == 0 {
		return msgs, nil
	}
	// Repair under the write lock, re-reading first: another process may
	// have repaired or appended since the read above.
	err = s.write(ctx, func(tx *wtx) error {
		if err := tx.lockSession(ctx, sessionID); err != nil {
			return err
		}
		msgs, err = loadMessages(ctx, tx, sessionID, true)
		if err != nil {
			return err
		}
		repaired, err := s.repairTx(ctx, tx, sessionID, msgs)
		if err != nil || !repaired {
			return err
		}
		msgs, err = loadMessages(ctx, tx, sessionID, true)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: messages: repair: %w", err)
	}
	return msgs, nil
}

// loadMessages reads a session's messages in Seq order in one statement
// (one consistent snapshot). With fromSummary it starts at the summary
// message, which it returns with role user.
func loadMessages(ctx context.Context, q queryer, sessionID string, fromSummary bool) ([]Message, error) {
	query := `SELECT m.id, m.seq, m.role, m.model, m.created_at, m.updated_at, m.parts, m.id = s.summary_message_id,
		s.message_count, m.input_id, m.interrupted FROM sessions s JOIN messages m ON m.session_id = s.id WHERE s.id = ?`
	if fromSummary {
		// The model's view: from the summary on, without replies a
		// crash cut off (they are the transcript's, not the model's).
		query += ` AND m.seq >= COALESCE((SELECT seq FROM messages WHERE id = s.summary_message_id AND session_id = s.id), 0)
			AND m.interrupted = 0`
	}
	query += ` ORDER BY m.seq`
	rows, err := q.QueryContext(ctx, query, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var (
			m                Message
			role             string
			created, updated int64
			// RawBytes spares a copy of every message: decodeParts
			// copies out what it keeps before the next row reuses it.
			parts       sql.RawBytes
			isSummary   bool
			count       int
			interrupted int64
		)
		if err := rows.Scan(&m.ID, &m.Seq, &role, &m.Model, &created, &updated, &parts, &isSummary, &count, &m.InputID, &interrupted); err != nil {
			return nil, err
		}
		if out == nil {
			out = make([]Message, 0, count)
		}
		if m.Parts, err = decodeParts(parts); err != nil {
			return nil, fmt.Errorf("message %s: %w", m.ID, err)
		}
		m.SessionID, m.Role = sessionID, llm.Role(role)
		m.CreatedAt, m.UpdatedAt = fromNanos(created), fromNanos(updated)
		m.Interrupted = interrupted != 0
		if fromSummary && isSummary {
			m.Role = llm.RoleUser
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		out = []Message{}
		// No rows: tell an empty session from a missing one.
		if _, err := getSession(ctx, q, sessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dangling is an assistant message (by index) and its calls that no later
// tool result answers.
type dangling struct {
	index int
	calls []ToolCallPart
}

// danglingCalls finds, in one backward pass, the tool calls with no result
// anywhere after them. The result is in decreasing index order.
func danglingCalls(msgs []Message) []dangling {
	answered := map[string]bool{}
	var out []dangling
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == llm.RoleAssistant {
			var open []ToolCallPart
			for _, c := range m.ToolCalls() {
				if !answered[c.ID] {
					open = append(open, c)
				}
			}
			if len(open) > 0 {
				out = append(out, dangling{index: i, calls: open})
			}
		}
		for _, r := range m.ToolResults() {
			answered[r.ToolCallID] = true
		}
	}
	return out
}

// repairTx gives every dangling call a cancelled result. The results go
// where a model request needs them: into the tool message that already
// answers that assistant message's other calls, or into a new tool message
// directly after it. Working from the last dangling message back keeps the
// earlier indices and sequence numbers valid while later ones shift.
func (s *SQLite) repairTx(ctx context.Context, tx *wtx, sessionID string, msgs []Message) (bool, error) {
	ds := danglingCalls(msgs)
	now := s.now().UnixNano()
	for _, d := range ds {
		results := make([]Part, len(d.calls))
		for i, c := range d.calls {
			results[i] = ToolResultPart{ToolCallID: c.ID, Name: c.Name, Content: CancelledContent, IsError: true, Cancelled: true}
		}
		k := d.index + 1
		for k < len(msgs) && msgs[k].Role == llm.RoleTool {
			k++
		}
		if k > d.index+1 {
			target := msgs[k-1]
			parts, err := encodeParts(append(append([]Part(nil), target.Parts...), results...))
			if err != nil {
				return false, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET parts = ?, updated_at = ? WHERE id = ?`, parts, now, target.ID); err != nil {
				return false, err
			}
			continue
		}
		parts, err := encodeParts(results)
		if err != nil {
			return false, err
		}
		after := msgs[d.index].Seq
		// Shift later messages up by one in two steps: a single
		// "seq = seq + 1" can collide with the UNIQUE(session_id, seq)
		// index row by row.
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET seq = -(seq + 1) WHERE session_id = ? AND seq > ?`, sessionID, after); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET seq = -seq WHERE session_id = ? AND seq < 0`, sessionID); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (id, session_id, seq, role, model, created_at, updated_at, parts)
			VALUES (?, ?, ?, 'tool', '', ?, ?, ?)`, s.newID(), sessionID, after+1, now, now, parts); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = message_count + 1 WHERE id = ?`, sessionID); err != nil {
			return false, err
		}
	}
	return len(ds) > 0, nil
}
