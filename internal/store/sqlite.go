package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
)

// driverName is modernc.org/sqlite's driver under a name of Odin's, whose
// connections keep the write-ahead log's files (see registerDriver).
const driverName = "odin-sqlite"

// walKeep is how much of the write-ahead log a closing process leaves on
// disk (journal_size_limit): the log is kept as a file, cut to this size.
const walKeep = 1 << 20

var registerOnce sync.Once

// registerDriver registers driverName. Its connections persist the WAL
// (SQLITE_FCNTL_PERSIST_WAL): when a process's last connection closes, the
// -wal and -shm files stay, checkpointed, instead of being deleted and
// created again by the next process. Every odin command opens the store,
// and on ext4 creating those two inodes (and deleting them at exit) was
// a tenth of a short run's CPU time. Each connection keeps the statements
// it runs prepared (stmtConn).
func registerDriver() {
	registerOnce.Do(func() {
		d := &sqlite.Driver{}
		d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			fc, ok := c.(sqlite.FileControl)
			if !ok {
				return nil
			}
			_, err := fc.FileControlPersistWAL("main", 1)
			return err
		})
		sql.Register(driverName, stmtDriver{d: d})
	})
}

// DefaultPath is where the database lives under the user's state directory
// ($XDG_STATE_HOME, or ~/.local/state when unset): stateDir/odin/odin.db.
func DefaultPath(stateDir string) string {
	return filepath.Join(stateDir, "odin", "odin.db")
}

// Option adjusts Open.
type Option func(*options)

type options struct {
	now         func() time.Time
	newID       func() string
	busyTimeout time.Duration
	readers     int
	schema      int
	// stall is PostgreSQL's idle_in_transaction_session_timeout; see
	// WithStallTimeout.
	stall time.Duration
}

// WithStallTimeout sets how long a PostgreSQL connection of this store
// may sit idle inside a transaction before the server ends it (default
// DefaultStallTimeout; 0 keeps the server's setting). SQLite ignores it.
func WithStallTimeout(d time.Duration) Option { return func(o *options) { o.stall = d } }

// SQLite is the Store on one SQLite file (modernc.org/sqlite, pure Go).
//
// The file is in WAL mode, so readers never block the writer nor each
// other, and any number of processes may open it: a committed write is seen
// at once by every connection. Writes go through one connection per
// process and start with BEGIN IMMEDIATE, taking the file's write lock up
// front; a writer from another process waits for it up to the busy timeout
// instead of failing midway. Commits use synchronous=NORMAL: a killed
// process loses nothing it committed; a power cut may lose the last
// commits but never corrupts the file.
type SQLite struct {
	w *sql.DB // the single writer connection
	r *sql.DB // read-only connections
	// members reads the cluster's members table on a connection of its
	// own (nil on PostgreSQL, whose Postgres has a pool of its own for
	// it): see memberConn.
	members *memberConn
	// gate queues this process's writers for w (nil on PostgreSQL, whose
	// pool has many connections).
	gate *writeGate
	// claims groups this process's concurrent Claims into shared write
	// transactions (nil on PostgreSQL).
	claims *claimGroup
	now    func() time.Time
	newID  func() string
	// dialect is dialectSQLite here; Postgres shares these methods with
	// dialectPostgres.
	dialect dialect
}

var _ Store = (*SQLite)(nil)

// Open opens (creating it and its directory if needed) the database at path
// and migrates it to the current schema. A database written by a newer Odin
// is refused with ErrSchemaTooNew.
func Open(ctx context.Context, path string, opts ...Option) (*SQLite, error) {
	o := options{
		now:         time.Now,
		newID:       func() string { return uuid.Must(uuid.NewV7()).String() },
		busyTimeout: 10 * time.Second,
		readers:     4,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" {
		return nil, fmt.Errorf("store: open: empty path: %w", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Transcripts are private: the file is created 0600 before SQLite
	// opens it (SQLite gives its -wal and -shm files the database's mode),
	// and an existing one, perhaps made by an older version, is tightened.
	if err := privateFiles(abs, abs+"-wal", abs+"-shm"); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	busy := fmt.Sprint(o.busyTimeout.Milliseconds())

	registerDriver()
	w, err := sql.Open(driverName, dsn(abs, url.Values{
		"_busy_timeout": {busy},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_foreign_keys": {"on"},
		"_txlock":       {"immediate"},
		"_pragma":       {fmt.Sprintf("journal_size_limit=%d", walKeep)},
	}))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One writer connection: in-process writers queue on the pool (which
	// honours ctx) rather than spinning on the file lock.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := migrateRetrying(ctx, w, o.schema, o.now(), o.busyTimeout); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: migrate: %w", path, err)
	}

	readDSN := dsn(abs, url.Values{
		"_busy_timeout": {busy},
		"_foreign_keys": {"on"},
		"_query_only":   {"on"},
		"_pragma":       {"mmap_size=268435456", fmt.Sprintf("journal_size_limit=%d", walKeep)},
	})
	r, err := sql.Open(driverName, readDSN)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(o.readers)
	r.SetMaxIdleConns(o.readers)
	// The -wal and -shm files exist now; tighten any left by an older
	// version with a wider mode.
	if err := privateFiles(abs, abs+"-wal", abs+"-shm"); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return &SQLite{w: w, r: r, members: &memberConn{dsn: readDSN}, gate: &writeGate{}, claims: &claimGroup{}, now: o.now, newID: o.newID}, nil
}

// privateFiles creates the first path if missing and makes every existing
// one readable and writable by its owner only.
func privateFiles(paths ...string) error {
	for i, p := range paths {
		if i == 0 {
			f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE, 0o600)
			if err != nil {
				return err
			}
			f.Close()
		}
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// dsn builds a file: URI so that any path (spaces, '?', '#', '%') reaches
// SQLite intact.
func dsn(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	return u.String()
}

// Close closes both connection pools.
func (s *SQLite) Close() error {
	return errors.Join(s.members.close(), s.r.Close(), s.w.Close())
}

// IntegrityCheck runs SQLite's full consistency check and returns its
// findings ("ok" when the file is sound), for `odin doctor` and tests.
func (s *SQLite) IntegrityCheck(ctx context.Context) (string, error) {
	rows, err := s.r.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return "", fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var out string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", fmt.Errorf("store: integrity check: %w", err)
		}
		if out != "" {
			out += "\n"
		}
		out += line
	}
	return out, rows.Err()
}

// batchKey carries a Batch's transaction in its context.
type batchKey struct{}

// Batch runs fn with a context in which every write of this store joins
// one transaction, committed when fn returns nil (rolled back otherwise).
// Each write runs in its own savepoint, so one that fails is undone alone
// and reports its error as it would outside a batch. Reads made with the
// context see the batch's writes only if they go through the writer, so
// a caller must not read what the batch wrote before it commits. A commit
// is most of a small write's cost: a writer with many writes queued (the
// session journal during a fan-out of specialists) pays it once. A Batch
// inside a Batch is a savepoint of the outer one: all or nothing.
func (s *SQLite) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	if tx, nested := ctx.Value(batchKey{}).(*wtx); nested {
		return savepoint(ctx, tx, "batch", func() error { return fn(ctx) })
	}
	if err := s.inTx(ctx, func(tx *wtx) error { return fn(context.WithValue(ctx, batchKey{}, tx)) }); err != nil {
		return fmt.Errorf("store: batch: %w", err)
	}
	return nil
}

// write runs fn in one write transaction (BEGIN IMMEDIATE) and commits it;
// inside a Batch, in a savepoint of the batch's transaction.
func (s *SQLite) write(ctx context.Context, fn func(tx *wtx) error) error {
	fn = s.fenced(ctx, fn) // a write through a claim checks it first (fence.go)
	if tx, ok := ctx.Value(batchKey{}).(*wtx); ok {
		return savepoint(ctx, tx, "write", func() error { return fn(tx) })
	}
	return s.inTx(ctx, fn)
}

// inTx runs fn in a write transaction and commits it (rolls it back when
// fn fails). On PostgreSQL a transaction the server aborted as a
// serialization failure or a deadlock is run again, a few times
// (retrySerialization): nothing of it was stored.
func (s *SQLite) inTx(ctx context.Context, fn func(tx *wtx) error) error {
	if s.dialect == dialectPostgres {
		return retrySerialization(ctx, pgTxAttempts, func() error { return s.inTxOnce(ctx, fn) })
	}
	return s.inTxOnce(ctx, fn)
}

// inTxOnce runs fn in a write transaction and commits it (rolls it back
// when fn fails).
func (s *SQLite) inTxOnce(ctx context.Context, fn func(tx *wtx) error) (err error) {
	began := time.Now()
	defer func() { observeWrite(time.Since(began), err) }()
	if s.gate != nil {
		if err := s.gate.lock(ctx); err != nil {
			return err
		}
		defer s.gate.unlock()
	}
	sqltx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx := &wtx{Tx: sqltx, dialect: s.dialect}
	if err = fn(tx); err != nil {
		tx.Rollback()
	} else {
		err = tx.Commit()
	}
	return err
}

// wtx is a write transaction. On SQLite its statements are prepared once
// per connection by the driver (stmtConn); pgx caches them on PostgreSQL.
type wtx struct {
	*sql.Tx
	// dialect selects lockSession's behaviour.
	dialect dialect
}

// savepoint runs fn in the savepoint name of tx: what fn wrote is undone
// when it fails.
func savepoint(ctx context.Context, tx *wtx, name string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sctx := tx.stepCtx(ctx)
	if _, err := tx.ExecContext(sctx, "SAVEPOINT "+name); err != nil {
		return err
	}
	if err := fn(); err != nil {
		_, _ = tx.ExecContext(sctx, "ROLLBACK TO "+name)
		_, _ = tx.ExecContext(sctx, "RELEASE "+name)
		return err
	}
	_, err := tx.ExecContext(sctx, "RELEASE "+name)
	return err
}

// stepCtx is the context of a statement of a SQLite write transaction
// that cannot wait (a savepoint, the fence's read): it runs on the
// connection holding the file's write lock, so a cancellation has
// nothing to interrupt, while a context that can be cancelled costs a
// goroutine per statement (the driver's interrupt watcher, and
// database/sql's watcher of open rows): in a two-turn run, most of the
// goroutines started. The caller checks ctx first. On PostgreSQL each
// statement is a round trip to a server that may stall: ctx is kept.
func (t *wtx) stepCtx(ctx context.Context) context.Context {
	if t.dialect == dialectPostgres {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// stamp returns t, or now when t is zero, as Unix nanoseconds.
func (s *SQLite) stamp(t time.Time) int64 {
	if t.IsZero() {
		t = s.now()
	}
	return t.UnixNano()
}

// fromNanos is the inverse of stamp: UTC, monotonic reading stripped.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// queryer is what both *sql.DB and *sql.Tx offer for reads.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// migrateRetrying runs migrate, trying again while another connection
// holds the file: SQLite answers SQLITE_BUSY at once, without waiting for
// the busy timeout, when a fresh database is switched to WAL or a read
// lock must be upgraded, which is what many sessions opening one new
// database at once (odin serve) run into.
func migrateRetrying(ctx context.Context, db *sql.DB, upTo int, now time.Time, budget time.Duration) error {
	deadline := time.Now().Add(budget)
	wait := 5 * time.Millisecond
	for {
		err := migrate(ctx, db, upTo, now)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's BUSY or LOCKED (primary codes 5
// and 6; extended codes keep them in the low byte).
func isBusy(err error) bool {
	var e interface{ Code() int }
	if errors.As(err, &e) {
		c := e.Code() & 0xff
		return c == 5 || c == 6
	}
	// The driver reports a failure while opening a connection (its
	// journal_mode pragma) as text only.
	s := err.Error()
	return strings.Contains(s, "(SQLITE_BUSY)") || strings.Contains(s, "(SQLITE_LOCKED)")
}
