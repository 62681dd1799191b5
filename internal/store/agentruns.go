package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AgentRunRecord is one entry of a session's agent-run registry. Data is
// the entry as JSON, defined by its writer (messages.AgentRun); the store
// only keeps it with its session.
type AgentRunRecord struct {
	ID        string
	SessionID string
	Data      json.RawMessage
	UpdatedAt time.Time
}

// PutAgentRun implements Store.
func (s *SQLite) PutAgentRun(ctx context.Context, r AgentRunRecord) error {
	if r.ID == "" || !json.Valid(r.Data) {
		return fmt.Errorf("store: put agent run: %w: want an ID and JSON data", ErrInvalid)
	}
	at := s.stamp(r.UpdatedAt)
	err := s.write(ctx, func(tx *wtx) error {
		if _, err := getSession(ctx, tx, r.SessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO agent_runs (id, session_id, data, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at
			WHERE agent_runs.session_id = excluded.session_id`,
			r.ID, r.SessionID, string(r.Data), at)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: put agent run: %w", err)
	}
	return nil
}

// AgentRuns implements Store.
func (s *SQLite) AgentRuns(ctx context.Context, sessionID string) ([]AgentRunRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, session_id, data, updated_at FROM agent_runs WHERE session_id = ? ORDER BY rowid`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	defer rows.Close()
	out := []AgentRunRecord{}
	for rows.Next() {
		var r AgentRunRecord
		var data string
		var at int64
		if err := rows.Scan(&r.ID, &r.SessionID, &data, &at); err != nil {
			return nil, fmt.Errorf("store: agent runs: %w", err)
		}
		r.Data, r.UpdatedAt = json.RawMessage(data), fromNanos(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: agent runs: %w", err)
	}
	return out, nil
}
