package store

import (
	"context"
	"errors"
)

// Sentinel errors. Methods wrap them with the operation and the subject, so
// classify with errors.Is.
var (
	// ErrNotFound: the session, message or checkpoint does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the argument breaks the contract (a relative project
	// path, an unknown role or part, an unknown stats grouping).
	ErrInvalid = errors.New("invalid argument")
	// ErrExists: an import would overwrite an existing session or message.
	ErrExists = errors.New("already exists")
	// ErrSchemaTooNew: the database was migrated by a newer Odin than this
	// one; opening it could corrupt data the newer schema relies on.
	ErrSchemaTooNew = errors.New("database schema is newer than this odin")
)

// Transient reports whether err is a failure that load explains and time
// alone may clear: the database busy or locked by another writer, a
// statement interrupted, a PostgreSQL transaction aborted as a
// serialization failure or a deadlock (after the store's own retries), or
// a deadline that passed while the write waited its turn (a process has
// one writer connection). A full disk, a read-only or a damaged file need
// someone to act instead; ErrFenced never clears.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || isBusy(err) || isPGRetryable(err) {
		return true
	}
	var e interface{ Code() int }
	return errors.As(err, &e) && e.Code()&0xff == sqliteInterrupt
}

// sqliteInterrupt is SQLITE_INTERRUPT: a statement stopped because its
// context ended.
const sqliteInterrupt = 9
