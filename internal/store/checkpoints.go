package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"
)

const checkpointColumns = `c.id, COALESCE(c.session_id, ''), c.project, c.label, c.created_at, COALESCE(c.restored_at, 0),
	(SELECT COUNT(*) FROM checkpoint_files f WHERE f.checkpoint_id = c.id)`

func scanCheckpoint(sc scanner) (Checkpoint, error) {
	var c Checkpoint
	var created, restored int64
	if err := sc.Scan(&c.ID, &c.SessionID, &c.Project, &c.Label, &created, &restored, &c.Files); err != nil {
		return Checkpoint{}, err
	}
	c.CreatedAt = fromNanos(created)
	if restored != 0 {
		c.RestoredAt = fromNanos(restored)
	}
	return c, nil
}

// CreateCheckpoint implements Store.
func (s *SQLite) CreateCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	if err := checkProject(c.Project); err != nil {
		return Checkpoint{}, fmt.Errorf("store: create checkpoint: %w", err)
	}
	if c.ID == "" {
		c.ID = s.newID()
	}
	created := s.stamp(c.CreatedAt)
	err := s.write(ctx, func(tx *wtx) error {
		if c.SessionID != "" {
			if _, err := getSession(ctx, tx, c.SessionID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (id, session_id, project, label, created_at)
			VALUES (?, NULLIF(?, ''), ?, ?, ?)`, c.ID, c.SessionID, c.Project, c.Label, created)
		if isConstraint(err) {
			return fmt.Errorf("checkpoint %s: %w", c.ID, ErrExists)
		}
		return err
	})
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: create checkpoint: %w", err)
	}
	return Checkpoint{ID: c.ID, SessionID: c.SessionID, Project: c.Project, Label: c.Label, CreatedAt: fromNanos(created)}, nil
}

// AddSnapshot implements Store.
func (s *SQLite) AddSnapshot(ctx context.Context, checkpointID string, f FileSnapshot) (bool, error) {
	if !filepath.IsAbs(f.Path) {
		return false, fmt.Errorf("store: add snapshot: path %q is not absolute: %w", f.Path, ErrInvalid)
	}
	var added bool
	err := s.write(ctx, func(tx *wtx) error {
		if err := checkpointExists(ctx, tx, checkpointID); err != nil {
			return err
		}
		// First snapshot wins: it holds the state before the change set.
		res, err := tx.ExecContext(ctx, `INSERT INTO checkpoint_files (checkpoint_id, path, existed, mode, content, hash_after)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id, path) DO NOTHING`,
			checkpointID, f.Path, boolInt(f.Existed), int64(f.Mode), nonNil(f.Content), f.HashAfter)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: add snapshot: %w", err)
	}
	return added, nil
}

// nonNil stores an empty file as an empty blob rather than NULL, so that
// "existed and empty" reads back as an empty slice.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func checkpointExists(ctx context.Context, q queryer, id string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM checkpoints WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("checkpoint %s: %w", id, ErrNotFound)
	}
	return err
}

// SetAfterHashes implements Store.
func (s *SQLite) SetAfterHashes(ctx context.Context, checkpointID string, hashes map[string]string) error {
	paths := make([]string, 0, len(hashes))
	for p := range hashes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	err := s.write(ctx, func(tx *wtx) error {
		if err := checkpointExists(ctx, tx, checkpointID); err != nil {
			return err
		}
		for _, p := range paths {
			res, err := tx.ExecContext(ctx, `UPDATE checkpoint_files SET hash_after = ? WHERE checkpoint_id = ? AND path = ?`,
				hashes[p], checkpointID, p)
			if err != nil {
				return err
			}
			if err := mustAffect(res, "snapshot of "+p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: set after-hashes: %w", err)
	}
	return nil
}

// Checkpoint implements Store.
func (s *SQLite) Checkpoint(ctx context.Context, id string) (Checkpoint, error) {
	c, err := scanCheckpoint(s.r.QueryRowContext(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("checkpoint %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: checkpoint: %w", err)
	}
	return c, nil
}

// Checkpoints implements Store.
func (s *SQLite) Checkpoints(ctx context.Context, project string) ([]Checkpoint, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c
		WHERE c.project = ? ORDER BY c.created_at DESC, c.rowid DESC`, project)
	if err != nil {
		return nil, fmt.Errorf("store: checkpoints: %w", err)
	}
	defer rows.Close()
	out := []Checkpoint{}
	for rows.Next() {
		c, err := scanCheckpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("store: checkpoints: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: checkpoints: %w", err)
	}
	return out, nil
}

// LatestUnrestored implements Store.
func (s *SQLite) LatestUnrestored(ctx context.Context, project string) (Checkpoint, error) {
	c, err := scanCheckpoint(s.r.QueryRowContext(ctx, `SELECT `+checkpointColumns+` FROM checkpoints c
		WHERE c.project = ? AND c.restored_at IS NULL
		AND EXISTS (SELECT 1 FROM checkpoint_files f WHERE f.checkpoint_id = c.id) ORDER BY c.created_at DESC, c.rowid DESC LIMIT 1`, project))
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("unrestored checkpoint in %s: %w", project, ErrNotFound)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: latest checkpoint: %w", err)
	}
	return c, nil
}

// Snapshots implements Store.
func (s *SQLite) Snapshots(ctx context.Context, checkpointID string) ([]FileSnapshot, error) {
	if err := checkpointExists(ctx, s.r, checkpointID); err != nil {
		return nil, fmt.Errorf("store: snapshots: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT path, existed, mode, content, hash_after FROM checkpoint_files
		WHERE checkpoint_id = ? ORDER BY path`, checkpointID)
	if err != nil {
		return nil, fmt.Errorf("store: snapshots: %w", err)
	}
	defer rows.Close()
	out := []FileSnapshot{}
	for rows.Next() {
		var f FileSnapshot
		var mode int64
		if err := rows.Scan(&f.Path, &f.Existed, &mode, &f.Content, &f.HashAfter); err != nil {
			return nil, fmt.Errorf("store: snapshots: %w", err)
		}
		if f.Content == nil {
			f.Content = []byte{}
		}
		f.Mode = fs.FileMode(mode)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: snapshots: %w", err)
	}
	return out, nil
}

// MarkRestored implements Store.
func (s *SQLite) MarkRestored(ctx context.Context, id string, at time.Time) error {
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE checkpoints SET restored_at = ? WHERE id = ?`, s.stamp(at), id)
		if err != nil {
			return err
		}
		return mustAffect(res, "checkpoint "+id)
	})
	if err != nil {
		return fmt.Errorf("store: mark restored: %w", err)
	}
	return nil
}

// CacheGet implements Store.
func (s *SQLite) CacheGet(ctx context.Context, key string) ([]byte, time.Time, bool, error) {
	var value []byte
	var at int64
	err := s.r.QueryRowContext(ctx, `SELECT value, stored_at FROM cache WHERE key = ?`, key).Scan(&value, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, fmt.Errorf("store: cache get: %w", err)
	}
	if value == nil {
		value = []byte{}
	}
	return value, fromNanos(at), true, nil
}

// CachePut implements Store.
func (s *SQLite) CachePut(ctx context.Context, key string, value []byte, at time.Time) error {
	err := s.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO cache (key, value, stored_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, stored_at = excluded.stored_at`,
			key, nonNil(value), s.stamp(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: cache put: %w", err)
	}
	return nil
}

// CachePrune implements Store.
func (s *SQLite) CachePrune(ctx context.Context, olderThan time.Time) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM cache WHERE stored_at < ?`, olderThan.UnixNano())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: cache prune: %w", err)
	}
	return n, nil
}
