package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// dialect names the SQL flavour a store speaks. The queries are written
// once, in the subset both understand; the few places that differ ask the
// dialect (see doc.go).
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

// migrateLockKey is the PostgreSQL advisory lock that serializes
// migrations ("odin" in ASCII).
const migrateLockKey int64 = 0x6f64696e

// Postgres is the Store on a PostgreSQL database, for several hosts
// sharing sessions. It runs the same queries as SQLite (the methods are
// the shared type's) over a pgx connection pool seen through database/sql,
// with placeholders rewritten for PostgreSQL.
//
// Unlike SQLite, writers are not serialized by a file lock: each write is
// a READ COMMITTED transaction on its own pooled connection, and what must
// not interleave is ordered by row locks on the session (see lockSession
// and AppendMessage's UPDATE of the session row, which comes before the
// sequence number is drawn).
//
// There is no lease: AcquireLease is an flock beside a SQLite file and
// means nothing across hosts, and this type does not pretend otherwise.
// What replaces it across hosts is fencing (issue 28): Claim bumps the
// session's epoch, and every write through the returned handle checks that
// epoch in its own transaction (fence.go). Every session the CLI opens
// for writing is claimed, and its writes go through the claim: a process
// that opens a session another one holds takes it over, and the other's
// next write fails with ErrFenced, which stops that session.
type Postgres struct {
	*SQLite
	pool *pgxpool.Pool
	// members is the members table (Membership) on a small pool of its
	// own: a heartbeat that waited for one of the sessions' connections
	// behind a thousand turns' writes came later than the TTL, and the
	// cluster dropped a live worker.
	members     *SQLite
	membersPool *pgxpool.Pool
}

// membersConns is the size of the membership pool: a node's heartbeat
// and its read of the members, each at most once per interval.
const membersConns = 2

var _ Store = (*Postgres)(nil)

// DefaultStallTimeout is how long a PostgreSQL transaction of this store
// may wait on its client between statements before the server ends the
// connection. A fenced write locks its session's row until it commits, and
// a writer whose process was stopped (SIGSTOP, a VM paused, a debugger)
// mid-transaction would otherwise hold that lock for as long as it is
// stopped: the next owner's Claim, which updates the row, would wait with
// it, and the session could not fail over. Odin's transactions never wait
// on anything but the database between statements, so a few seconds of
// client silence means a stalled writer; when it resumes, its write fails
// on the closed connection, is retried, and meets the fence.
const DefaultStallTimeout = 5 * time.Second

// OpenPostgres connects to the PostgreSQL database named by connURL (a
// postgres:// or postgresql:// URL, or a libpq keyword string) and
// migrates it to the current schema. Options as for Open; WithBusyTimeout
// bounds the wait for the first connection.
func OpenPostgres(ctx context.Context, connURL string, opts ...Option) (*Postgres, error) {
	o := options{
		now:         time.Now,
		newID:       func() string { return uuid.Must(uuid.NewV7()).String() },
		busyTimeout: 10 * time.Second,
		stall:       DefaultStallTimeout,
	}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, fmt.Errorf("store: open postgres %s: bad connection string: %w", redactURL(connURL), ErrInvalid)
	}
	const stallParam = "idle_in_transaction_session_timeout"
	if _, set := cfg.ConnConfig.RuntimeParams[stallParam]; !set && o.stall > 0 {
		cfg.ConnConfig.RuntimeParams[stallParam] = strconv.FormatInt(o.stall.Milliseconds(), 10)
	}
	where := redactURL(connURL)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres %s: %w", where, err)
	}
	pctx, cancel := context.WithTimeout(ctx, o.busyTimeout)
	err = pool.Ping(pctx)
	cancel()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: open postgres %s: %w", where, err)
	}
	db := sql.OpenDB(rebindConnector{stdlib.GetPoolConnector(pool)})
	// The pool is pgxpool's; database/sql must not keep idle conns of
	// its own, or they would be held out of pgxpool.
	db.SetMaxIdleConns(0)
	if err := migrateDialect(ctx, db, dialectPostgres, o.schema, o.now()); err != nil {
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: open postgres %s: migrate: %w", where, err)
	}
	core := &SQLite{w: db, r: db, now: o.now, newID: o.newID, dialect: dialectPostgres}
	mcfg := cfg.Copy()
	mcfg.MaxConns, mcfg.MinConns = membersConns, 0
	mpool, err := pgxpool.NewWithConfig(ctx, mcfg)
	if err != nil {
		db.Close()
		pool.Close()
		return nil, fmt.Errorf("store: open postgres %s: members pool: %w", where, err)
	}
	mdb := sql.OpenDB(rebindConnector{stdlib.GetPoolConnector(mpool)})
	mdb.SetMaxIdleConns(0)
	members := &SQLite{w: mdb, r: mdb, now: o.now, newID: o.newID, dialect: dialectPostgres}
	return &Postgres{SQLite: core, pool: pool, members: members, membersPool: mpool}, nil
}

// Close closes the database/sql views and then the pools under them.
func (p *Postgres) Close() error {
	err := errors.Join(p.w.Close(), p.members.w.Close())
	p.pool.Close()
	p.membersPool.Close()
	return err
}

// The members table, on the membership pool.

// Heartbeat implements Membership.
func (p *Postgres) Heartbeat(ctx context.Context, m Member) error { return p.members.Heartbeat(ctx, m) }

// Members implements Membership.
func (p *Postgres) Members(ctx context.Context, cluster string, since time.Time) ([]Member, error) {
	return p.members.Members(ctx, cluster, since)
}

// LeaveCluster implements Membership.
func (p *Postgres) LeaveCluster(ctx context.Context, cluster, id string) error {
	return p.members.LeaveCluster(ctx, cluster, id)
}

// PruneMembers implements Membership.
func (p *Postgres) PruneMembers(ctx context.Context, cluster string, before time.Time) (int64, error) {
	return p.members.PruneMembers(ctx, cluster, before)
}

// IntegrityCheck has no PostgreSQL counterpart that works without an
// extension; the server checks its own pages. It reports that instead of
// running SQLite's PRAGMA, which PostgreSQL would reject.
func (p *Postgres) IntegrityCheck(ctx context.Context) (string, error) {
	return "", fmt.Errorf("store: integrity check: not available on PostgreSQL (use amcheck on the server): %w", ErrInvalid)
}

// redactURL returns connURL with any password replaced, for errors.
func redactURL(connURL string) string {
	cfg, err := pgconn.ParseConfig(connURL)
	if err != nil || cfg.Password == "" {
		if i := strings.Index(connURL, "@"); i >= 0 {
			if j := strings.Index(connURL, "://"); j >= 0 && j < i {
				return connURL[:j+3] + "…@" + connURL[i+1:]
			}
		}
		return connURL
	}
	return strings.ReplaceAll(connURL, cfg.Password, "xxxxx")
}

// greatest is the two-argument maximum: SQLite's scalar MAX, PostgreSQL's
// GREATEST (where MAX is only the aggregate).
func (s *SQLite) greatest() string {
	if s.dialect == dialectPostgres {
		return "GREATEST"
	}
	return "MAX"
}

// lockSession orders this transaction after every other one writing the
// session, until it ends. On SQLite the transaction already holds the
// file's write lock and this does nothing; on PostgreSQL it takes the
// session row's lock. A missing session is left to the caller to report.
func (t *wtx) lockSession(ctx context.Context, id string) error {
	if t.dialect != dialectPostgres {
		return nil
	}
	var one int
	err := t.Tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ? FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// pgTxAttempts is how many times a PostgreSQL write transaction is tried
// when the server aborts it as a serialization failure or a deadlock.
const pgTxAttempts = 4

// retrySerialization runs fn until it succeeds, fails for another reason,
// or has been tried attempts times, waiting a little (1, 2, 4 ms... with
// jitter, so that two transactions that collided do not collide again)
// between tries. Only the server's "try again" answers are retried:
// serialization_failure (40001) and deadlock_detected (40P01), after
// which the whole transaction was rolled back. ErrFenced and everything
// else are returned at once.
func retrySerialization(ctx context.Context, attempts int, fn func() error) error {
	wait := time.Millisecond
	for i := 1; ; i++ {
		err := fn()
		if err == nil || i >= attempts || errors.Is(err, ErrFenced) || !isPGRetryable(err) {
			return err
		}
		t := time.NewTimer(wait + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

// isPGRetryable reports PostgreSQL's serialization_failure (40001) and
// deadlock_detected (40P01): the transaction was rolled back and running
// it again may succeed.
func isPGRetryable(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "40001" || e.Code == "40P01")
}

// isPGConstraint reports PostgreSQL's unique_violation (SQLSTATE 23505),
// which covers primary keys too.
func isPGConstraint(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

// rebindConnector hands out pgx connections whose queries are rewritten
// from the shared queries' '?' placeholders to PostgreSQL's $1, $2...
type rebindConnector struct{ driver.Connector }

// Connect implements driver.Connector.
func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: pgx connector returned %T", conn)
	}
	return &rebindConn{pc}, nil
}

// rebindConn is a pgx stdlib connection (all of whose optional interfaces
// it keeps by embedding) that rewrites placeholders in every query.
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// rebind numbers the '?' placeholders of query as $1, $2... A '?' inside a
// string literal, a quoted identifier or a comment is left alone.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) && query[j] != c {
				j++
			}
			end := min(j+1, len(query))
			b.WriteString(query[i:end])
			i = end - 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end - 1
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
