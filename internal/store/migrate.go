package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one embedded schema step, named NNNN_what.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. The files
// are part of the binary, so a malformed name is a build mistake that the
// tests catch; it is still reported as an error rather than a panic.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(migrationFS, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := range out {
		if out[i].version != i+1 {
			return nil, fmt.Errorf("migration %s: versions must run 1, 2, 3... without gaps", out[i].name)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this build migrates databases to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate brings db up to version upTo (0 = the latest) in one immediate
// transaction, so two processes opening a fresh file at the same moment
// serialize: the second finds the work done. Applying is idempotent: a
// version recorded in schema_migrations is never run again.
func migrate(ctx context.Context, db *sql.DB, upTo int, now time.Time) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if upTo <= 0 || upTo > len(ms) {
		upTo = len(ms)
	}
	// A database already at this schema needs no write lock: every
	// session but the first finds it so, and must not queue behind the
	// writers of the sessions already running (odin serve opens many).
	var have int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err == nil && have == upTo {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return err
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("version %d, this odin knows up to %d: %w", current, len(ms), ErrSchemaTooNew)
	}
	for _, m := range ms[current:upTo] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("apply %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, now.UnixNano()); err != nil {
			return fmt.Errorf("record %s: %w", m.name, err)
		}
	}
	return tx.Commit()
}
