package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

const sessionColumns = `id, COALESCE(parent_id, ''), project, title, agent, mode, model, created_at, updated_at,
	prompt_tokens, completion_tokens, cached_tokens, cost, summary_message_id, message_count`

type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (Session, error) {
	var s Session
	var created, updated int64
	err := sc.Scan(&s.ID, &s.ParentID, &s.Project, &s.Title, &s.Agent, &s.Mode, &s.Model, &created, &updated,
		&s.PromptTokens, &s.CompletionTokens, &s.CachedTokens, &s.Cost, &s.SummaryMessageID, &s.MessageCount)
	s.CreatedAt, s.UpdatedAt = fromNanos(created), fromNanos(updated)
	return s, err
}

func collectSessions(rows *sql.Rows, err error) ([]Session, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func checkProject(p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return fmt.Errorf("project %q is not an absolute path: %w", p, ErrInvalid)
	}
	return nil
}

// CreateSession implements Store.
func (s *SQLite) CreateSession(ctx context.Context, in Session) (Session, error) {
	if in.ID == "" {
		in.ID = s.newID()
	}
	created := s.stamp(in.CreatedAt)
	updated := created
	if !in.UpdatedAt.IsZero() {
		updated = in.UpdatedAt.UnixNano()
	}
	err := s.write(ctx, func(tx *wtx) error {
		if in.ParentID != "" {
			var parentProject string
			err := tx.QueryRowContext(ctx, `SELECT project FROM sessions WHERE id = ?`, in.ParentID).Scan(&parentProject)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("parent session %s: %w", in.ParentID, ErrNotFound)
			}
			if err != nil {
				return err
			}
			if in.Project == "" {
				in.Project = parentProject
			} else if in.Project != parentProject {
				return fmt.Errorf("project %s differs from the parent's %s: %w", in.Project, parentProject, ErrInvalid)
			}
		}
		if err := checkProject(in.Project); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, parent_id, project, title, agent, mode, model, created_at, updated_at)
			VALUES (?, NULLIF(?, ''), ?, ?, ?, ?, ?, ?, ?)`,
			in.ID, in.ParentID, in.Project, in.Title, in.Agent, in.Mode, in.Model, created, updated)
		if isConstraint(err) {
			return fmt.Errorf("session %s: %w", in.ID, ErrExists)
		}
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("store: create session: %w", err)
	}
	return Session{
		ID: in.ID, ParentID: in.ParentID, Project: in.Project, Title: in.Title, Agent: in.Agent,
		Mode: in.Mode, Model: in.Model, CreatedAt: fromNanos(created), UpdatedAt: fromNanos(updated),
	}, nil
}

// isConstraint reports a UNIQUE or PRIMARY KEY violation.
func isConstraint(err error) bool {
	if isPGConstraint(err) {
		return true
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// Session implements Store.
func (s *SQLite) Session(ctx context.Context, id string) (Session, error) {
	out, err := getSession(ctx, s.r, id)
	if err != nil {
		return Session{}, fmt.Errorf("store: session: %w", err)
	}
	return out, nil
}

func getSession(ctx context.Context, q queryer, id string) (Session, error) {
	out, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return out, err
}

// Sessions implements Store.
func (s *SQLite) Sessions(ctx context.Context, q SessionQuery) ([]Session, error) {
	query := `SELECT ` + sessionColumns + ` FROM sessions WHERE 1=1`
	var args []any
	if q.Project != "" {
		query += ` AND project = ?`
		args = append(args, q.Project)
	}
	if !q.Children {
		query += ` AND parent_id IS NULL`
	}
	// rowid breaks ties between sessions updated in the same clock tick:
	// the later insert is the newer.
	query += ` ORDER BY updated_at DESC, rowid DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	out, err := collectSessions(s.r.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("store: sessions: %w", err)
	}
	return out, nil
}

// LatestSession implements Store.
func (s *SQLite) LatestSession(ctx context.Context, project string) (Session, error) {
	out, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE project = ? AND parent_id IS NULL ORDER BY updated_at DESC, rowid DESC LIMIT 1`, project))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("store: latest session of %s: %w", project, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: latest session of %s: %w", project, err)
	}
	return out, nil
}

// Children implements Store.
func (s *SQLite) Children(ctx context.Context, id string) ([]Session, error) {
	out, err := collectSessions(s.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE parent_id = ? ORDER BY created_at, rowid`, id))
	if err != nil {
		return nil, fmt.Errorf("store: children of %s: %w", id, err)
	}
	return out, nil
}

// UpdateSession implements Store.
func (s *SQLite) UpdateSession(ctx context.Context, id string, u SessionUpdate) error {
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET
			title = COALESCE(?, title), mode = COALESCE(?, mode), model = COALESCE(?, model), updated_at = ?
			WHERE id = ?`, nullable(u.Title), nullable(u.Mode), nullable(u.Model), s.now().UnixNano(), id)
		if err != nil {
			return err
		}
		return mustAffect(res, "session "+id)
	})
	if err != nil {
		return fmt.Errorf("store: update session: %w", err)
	}
	return nil
}

func nullable(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// mustAffect turns "no row changed" into ErrNotFound.
func mustAffect(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// DeleteSession implements Store.
func (s *SQLite) DeleteSession(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "session "+id)
	})
	if err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}
