package store

import "errors"

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
