package store

import (
	"context"
	"fmt"
)

// Import implements Store.
func (s *SQLite) Import(ctx context.Context, archives []SessionArchive) error {
	err := s.write(ctx, func(tx *wtx) error {
		for _, a := range archives {
			if err := s.importTx(ctx, tx, a); err != nil {
				return fmt.Errorf("session %s: %w", a.Session.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: import: %w", err)
	}
	return nil
}

func (s *SQLite) importTx(ctx context.Context, tx *wtx, a SessionArchive) error {
	ss := a.Session
	if ss.ID == "" {
		return fmt.Errorf("empty session id: %w", ErrInvalid)
	}
	if err := checkProject(ss.Project); err != nil {
		return err
	}
	if _, err := getSession(ctx, tx, ss.ID); err == nil {
		return ErrExists
	}
	if ss.ParentID != "" {
		if _, err := getSession(ctx, tx, ss.ParentID); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
	}
	created := s.stamp(ss.CreatedAt)
	updated := created
	if !ss.UpdatedAt.IsZero() {
		updated = ss.UpdatedAt.UnixNano()
	}
	summaryFound := ss.SummaryMessageID == ""
	for _, m := range a.Messages {
		if m.ID == ss.SummaryMessageID {
			summaryFound = true
		}
	}
	if !summaryFound {
		return fmt.Errorf("summary message %s is not among the session's messages: %w", ss.SummaryMessageID, ErrInvalid)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, parent_id, project, title, agent, mode, model,
		created_at, updated_at, prompt_tokens, completion_tokens, cached_tokens, cost, summary_message_id, message_count)
		VALUES (?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ss.ID, ss.ParentID, ss.Project, ss.Title, ss.Agent, ss.Mode, ss.Model, created, updated,
		ss.PromptTokens, ss.CompletionTokens, ss.CachedTokens, ss.Cost, ss.SummaryMessageID, len(a.Messages)); err != nil {
		return err
	}
	for _, m := range a.Messages {
		if m.SessionID != "" && m.SessionID != ss.ID {
			return fmt.Errorf("message %s belongs to session %s: %w", m.ID, m.SessionID, ErrInvalid)
		}
		if m.ID == "" || m.Seq <= 0 || !validRole(m.Role) {
			return fmt.Errorf("message %q (seq %d, role %q): %w", m.ID, m.Seq, m.Role, ErrInvalid)
		}
		parts, err := encodeParts(m.Parts)
		if err != nil {
			return fmt.Errorf("message %s: %w", m.ID, err)
		}
		mc := s.stamp(m.CreatedAt)
		mu := mc
		if !m.UpdatedAt.IsZero() {
			mu = m.UpdatedAt.UnixNano()
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO messages (id, session_id, seq, role, model, created_at, updated_at, parts, input_id, interrupted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, ss.ID, m.Seq, string(m.Role), m.Model, mc, mu, parts, m.InputID, boolInt(m.Interrupted))
		if isConstraint(err) {
			return fmt.Errorf("message %s (seq %d): %w", m.ID, m.Seq, ErrExists)
		}
		if err != nil {
			return err
		}
	}
	for _, r := range a.Tools {
		r.SessionID = ss.ID
		if err := s.recordToolTx(ctx, tx, r); err != nil {
			return err
		}
	}
	if err := setTodosTx(ctx, tx, ss.ID, a.Todos); err != nil {
		return err
	}
	for _, u := range a.Usage {
		u.SessionID = ss.ID
		if err := insertUsage(ctx, tx, u, ss.Project, s.stamp(u.At)); err != nil {
			return err
		}
	}
	return nil
}
