package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
)

// openConn opens a database of driverName at a fresh path and returns it,
// one pinned connection of it and that one's driver connection.
func openConn(t *testing.T) (*sql.DB, *sql.Conn, *stmtConn) {
	t.Helper()
	registerDriver()
	db, err := sql.Open(driverName, dsn(filepath.Join(t.TempDir(), "c.db"), url.Values{"_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var sc *stmtConn
	if err := conn.Raw(func(dc any) error {
		var ok bool
		if sc, ok = dc.(*stmtConn); !ok {
			return fmt.Errorf("driver connection is %T, want *stmtConn", dc)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db, conn, sc
}

// A statement is prepared once per connection and serves every later run
// of the same text, inside a transaction and out, with fresh arguments.
func TestStmtConnReusesStatements(t *testing.T) {
	ctx := context.Background()
	_, conn, sc := openConn(t)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO t (k, v) VALUES (?, ?)`
	for i := range 3 {
		if _, err := conn.ExecContext(ctx, ins, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	cs := sc.stmts[ins]
	if cs == nil {
		t.Fatalf("%q is not cached: %v", ins, sc.stmts)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, ins, 3, "v3"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if sc.stmts[ins] != cs {
		t.Error("the transaction prepared the insert again")
	}
	const get = `SELECT v FROM t WHERE k = ?`
	for i := range 4 {
		var v string
		if err := conn.QueryRowContext(ctx, get, i).Scan(&v); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("v", i); v != want {
			t.Errorf("row %d: %q, want %q", i, v, want)
		}
	}
	// A constraint failure leaves the statement usable.
	if _, err := conn.ExecContext(ctx, ins, 0, "dup"); err == nil {
		t.Error("a duplicate key was inserted")
	}
	if _, err := conn.ExecContext(ctx, ins, 9, "v9"); err != nil {
		t.Fatalf("the insert after a failed one: %v", err)
	}
}

// Two open result sets of the same query each read their own rows: the
// second runs on a statement of its own while the first is open.
func TestStmtConnSameQueryTwiceOpen(t *testing.T) {
	ctx := context.Background()
	db, conn, sc := openConn(t)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := conn.ExecContext(ctx, `INSERT INTO t (k) VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
	}
	const q = `SELECT k FROM t WHERE k >= ? ORDER BY k`
	outer, err := conn.QueryContext(ctx, q, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !outer.Next() {
		t.Fatal("outer: no row")
	}
	inner, err := conn.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for inner.Next() {
		var k int
		if err := inner.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	inner.Close()
	var k int
	if err := outer.Scan(&k); err != nil {
		t.Fatal(err)
	}
	got = append(got, k)
	for outer.Next() {
		if err := outer.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got = append(got, k)
	}
	outer.Close()
	if fmt.Sprint(got) != "[0 1 2 3 2 3]" {
		t.Errorf("rows %v, want [0 1 2 3 2 3]", got)
	}
	if cs := sc.stmts[q]; cs == nil || cs.busy {
		t.Errorf("after both closed the statement is %+v, want cached and free", cs)
	}
	if err := conn.QueryRowContext(ctx, q, 3).Scan(&k); err != nil || k != 3 {
		t.Errorf("reuse after close: %d, %v", k, err)
	}
	// A kept statement holds no read transaction once its rows are
	// closed: another connection's write is checkpointed whole, which a
	// reader still on an older snapshot would prevent.
	if _, err := db.ExecContext(ctx, `INSERT INTO t (k) VALUES (10)`); err != nil {
		t.Fatal(err)
	}
	var busy, logged, done int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done); err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Errorf("checkpoint blocked (busy %d, log %d, done %d): a kept statement still reads", busy, logged, done)
	}
}

// Scripts of several statements run whole and are not kept; the cache
// stops growing at its bound and what is beyond it still runs.
func TestStmtConnScriptsAndBound(t *testing.T) {
	ctx := context.Background()
	_, conn, sc := openConn(t)
	script := `CREATE TABLE a (k INTEGER); CREATE TABLE b (k INTEGER); INSERT INTO b VALUES (7)`
	if _, err := conn.ExecContext(ctx, script); err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.stmts[script]; ok {
		t.Error("a script was cached")
	}
	var k int
	if err := conn.QueryRowContext(ctx, `SELECT k FROM b`).Scan(&k); err != nil || k != 7 {
		t.Fatalf("the script's insert: %d, %v", k, err)
	}
	for i := range maxConnStmts + 5 {
		q := fmt.Sprintf("INSERT INTO a (k) VALUES (%d)", i)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if len(sc.stmts) != maxConnStmts {
		t.Errorf("%d cached statements, want the bound %d", len(sc.stmts), maxConnStmts)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM a`).Scan(&n); err != nil || n != maxConnStmts+5 {
		t.Errorf("%d rows, %v; want %d", n, err, maxConnStmts+5)
	}
}
