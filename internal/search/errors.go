package search

import "errors"

var (
	// ErrPattern reports a pattern that cannot be compiled.
	ErrPattern = errors.New("invalid pattern")
	// ErrStop, returned by a walk callback, ends the walk early without
	// error.
	ErrStop = errors.New("search: stop walking")

	errTooLarge = errors.New("file too large")
)
