package store

import (
	"context"
	"database/sql"
	"sync"
)

// maxCachedStmts bounds the writer's statement cache. Odin's writes use a
// few dozen fixed queries; one built at run time beyond the bound is
// simply prepared for its single use.
const maxCachedStmts = 128

// stmtCache keeps the writer's prepared statements. SQLite compiles every
// statement before it runs, and for the short inserts and updates Odin
// makes on every message, tool call and usage record the compile cost
// more than the step (BenchmarkAppendMessage: 245 → 150 µs); a statement prepared once on the single writer connection is
// reused by every transaction on it.
type stmtCache struct {
	db *sql.DB
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// get returns the prepared statement for query, or nil when it has none
// yet: the writer's one connection is busy with the caller's transaction,
// so a statement is prepared after it (prepareSeen) and serves the next
// transactions.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query]
}

// prepare prepares and keeps each of queries not cached yet, while the
// writer connection is free (between transactions). A query that does not
// prepare is left to run directly, which reports SQLite's error.
func (c *stmtCache) prepare(ctx context.Context, queries []string) {
	if c == nil {
		return
	}
	for _, q := range queries {
		c.mu.Lock()
		_, ok := c.m[q]
		full := len(c.m) >= maxCachedStmts
		c.mu.Unlock()
		if ok || full {
			continue
		}
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, ok := c.m[q]; ok || len(c.m) >= maxCachedStmts {
			st.Close()
		} else {
			if c.m == nil {
				c.m = make(map[string]*sql.Stmt)
			}
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

// close closes every cached statement.
func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		st.Close()
		delete(c.m, q)
	}
}

// wtx is a write transaction whose queries run as the writer's cached
// prepared statements. It offers *sql.Tx's methods.
type wtx struct {
	*sql.Tx
	stmts *stmtCache // nil: no cache (PostgreSQL)
	seen  []string   // queries run without a cached statement
	// dialect selects lockSession's behaviour.
	dialect dialect
}

// stmt is query's cached statement bound to the transaction, or nil (the
// query is noted for preparing after the transaction).
func (t *wtx) stmt(ctx context.Context, query string) *sql.Stmt {
	if t.stmts == nil {
		// PostgreSQL: pgx caches prepared statements per connection.
		return nil
	}
	if st := t.stmts.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st)
	}
	t.seen = append(t.seen, query)
	return nil
}

// ExecContext runs query with args in the transaction.
func (t *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryRowContext runs query with args in the transaction and returns at
// most one row.
func (t *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// QueryContext runs query with args in the transaction.
func (t *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}
