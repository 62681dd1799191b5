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

//go:embed migrations/*.sql migrations_pg/*.sql
var migrationFS embed.FS

// migrationDirs holds each dialect's migration set. Both sets keep the
// same versions and names, so a schema version means the same tables on
// either backend (TestMigrationSetsMatch).
var migrationDirs = map[dialect]string{dialectSQLite: "migrations", dialectPostgres: "migrations_pg"}

// migration is one embedded schema step, named NNNN_what.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. The files
// are part of the binary, so a malformed name is a build mistake that the
// tests catch; it is still reported as an error rather than a panic.
func migrations() ([]migration, error) { return migrationsOf(dialectSQLite) }

// migrationsOf returns the embedded migrations of dialect d in version order.
func migrationsOf(d dialect) ([]migration, error) {
	dir := migrationDirs[d]
	entries, err := fs.ReadDir(migrationFS, dir)
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
		body, err := fs.ReadFile(migrationFS, dir+"/"+name)
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
	return migrateDialect(ctx, db, dialectSQLite, upTo, now)
}

// migrateDialect is migrate for the migration set and DDL of dialect d. On
// PostgreSQL the transaction first takes a transaction-scoped advisory
// lock: there is no file lock there, and two processes migrating a fresh
// database at once must serialize as they do on SQLite.
func migrateDialect(ctx context.Context, db *sql.DB, d dialect, upTo int, now time.Time) error {
	ms, err := migrationsOf(d)
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
	ddl := `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`
	if d == dialectPostgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, migrateLockKey); err != nil {
			return err
		}
		ddl = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL
	)`
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
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
