package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"modernc.org/sqlite"
)

// maxConnStmts bounds each connection's statement cache. Odin runs a few
// dozen fixed queries; one built at run time beyond the bound is prepared
// for its single use, as without a cache.
const maxConnStmts = 128

// stmtDriver is modernc.org/sqlite's driver with a statement cache on each
// connection (stmtConn).
type stmtDriver struct{ d *sqlite.Driver }

// Open opens a connection of the wrapped driver and gives it a cache.
func (d stmtDriver) Open(name string) (driver.Conn, error) {
	c, err := d.d.Open(name)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(sqliteConn)
	if !ok {
		// The driver is a dependency of this build: a missing method is
		// a mistake the tests catch, reported rather than panicking.
		c.Close()
		return nil, fmt.Errorf("store: %T lacks the methods database/sql uses", c)
	}
	return &stmtConn{sqliteConn: sc, stmts: make(map[string]*connStmt)}, nil
}

// sqliteConn is what database/sql uses of a modernc.org/sqlite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachedStmt is a modernc.org/sqlite prepared statement.
type cachedStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// connStmt is one statement of a connection's cache.
type connStmt struct {
	st cachedStmt
	// busy: rows read from it are open, so a second query of the same
	// text runs on a statement of its own.
	busy bool
}

// stmtConn is a connection that keeps every statement it runs prepared:
// SQLite compiles a statement before it runs, and for the short inserts,
// updates and savepoints Odin makes on every message and usage record the
// compile costs more than the step. A statement is compiled once per
// connection, on its first use, and reused by every later Exec and Query
// of the same text, in a transaction or not.
//
// database/sql holds a connection's lock around each call on it and on its
// rows, so the cache needs no lock of its own.
type stmtConn struct {
	sqliteConn
	stmts map[string]*connStmt
}

// cached returns query's statement, preparing it on first use; nil when
// the query is not to be cached (a script of several statements, which
// SQLite compiles one at a time anyway, or the cache is full) or is busy.
func (c *stmtConn) cached(ctx context.Context, query string) (*connStmt, error) {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	if len(c.stmts) >= maxConnStmts || strings.Contains(query, ";") {
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cst, ok := st.(cachedStmt)
	if !ok {
		st.Close()
		return nil, nil
	}
	cs := &connStmt{st: cst}
	c.stmts[query] = cs
	return cs, nil
}

// ExecContext runs query through its cached statement.
func (c *stmtConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return cs.st.ExecContext(ctx, args)
}

// QueryContext runs query through its cached statement; the statement is
// busy until the rows are closed.
func (c *stmtConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.cached(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.st.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &stmtRows{Rows: rows, cs: cs}, nil
}

// Close finalizes the cached statements and closes the connection.
func (c *stmtConn) Close() error {
	var errs []error
	for q, cs := range c.stmts {
		errs = append(errs, cs.st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// stmtRows are rows of a cached statement, which closing frees for the
// next query.
type stmtRows struct {
	driver.Rows
	cs *connStmt
}

// Close resets the statement (modernc.org/sqlite resets rather than
// finalizes a prepared statement's rows) and frees it.
func (r *stmtRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}

// sqliteRows is what modernc.org/sqlite's rows offer beyond driver.Rows:
// the column types, which stmtRows passes on so that sql.Rows.ColumnTypes
// reports what it did without the cache.
type sqliteRows interface {
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(sqliteRows); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (r *stmtRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(sqliteRows); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *stmtRows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(sqliteRows); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (r *stmtRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(sqliteRows); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(sqliteRows); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
