package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// codeErr is an error with an SQLite result code, as the driver's are.
type codeErr int

func (c codeErr) Error() string { return fmt.Sprintf("sqlite error %d", int(c)) }
func (c codeErr) Code() int     { return int(c) }

// Transient tells failures that time clears (busy, locked, interrupted, a
// deadline) from those that need someone to act (a full disk, a read-only
// or damaged file), wrapped as the store wraps them.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("store: batch: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("store: append message: %w", codeErr(5)), true},        // SQLITE_BUSY
		{fmt.Errorf("store: append message: %w", codeErr(5|(2<<8))), true}, // SQLITE_BUSY_SNAPSHOT
		{fmt.Errorf("store: append message: %w", codeErr(6)), true},        // SQLITE_LOCKED
		{fmt.Errorf("store: append message: %w", codeErr(9)), true},        // SQLITE_INTERRUPT
		{fmt.Errorf("store: append message: %w", codeErr(13)), false},      // SQLITE_FULL
		{fmt.Errorf("store: append message: %w", codeErr(8)), false},       // SQLITE_READONLY
		{fmt.Errorf("store: append message: %w", codeErr(11)), false},      // SQLITE_CORRUPT
		{errors.New("database or disk is full (13)"), false},
		{context.Canceled, false},
		{nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
