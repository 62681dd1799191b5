package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// retrySerialization runs a transaction again only when PostgreSQL said
// to (40001, 40P01), a bounded number of times; a fenced write, a
// constraint violation or any other failure is returned after one try.
func TestRetrySerialization(t *testing.T) {
	pg := func(code string) error {
		return fmt.Errorf("store: append message: %w", &pgconn.PgError{Code: code, Message: "test"})
	}
	fenced := fmt.Errorf("store: append message: %w", &FencedError{Session: "s", Epoch: 1, Current: 2})
	for _, tc := range []struct {
		name  string
		errs  []error // what the tries return, in order; nil after them
		calls int
		want  error // nil, or the error the result must match (errors.Is)
	}{
		{"serialization failure, then success", []error{pg("40001"), pg("40001")}, 3, nil},
		{"deadlock, then success", []error{pg("40P01")}, 2, nil},
		{"serialization failure every time", []error{pg("40001"), pg("40001"), pg("40001"), pg("40001"), pg("40001")}, pgTxAttempts, pg("40001")},
		{"fenced", []error{fenced, nil}, 1, ErrFenced},
		{"unique violation", []error{pg("23505"), nil}, 1, pg("23505")},
		{"other error", []error{ErrNotFound, nil}, 1, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retrySerialization(context.Background(), pgTxAttempts, func() error {
				calls++
				if calls <= len(tc.errs) {
					return tc.errs[calls-1]
				}
				return nil
			})
			if calls != tc.calls {
				t.Errorf("tried %d times, want %d", calls, tc.calls)
			}
			switch want := tc.want; {
			case want == nil && err != nil:
				t.Errorf("err = %v, want success", err)
			case want != nil && err == nil:
				t.Errorf("succeeded, want %v", want)
			case want != nil:
				var pe, wpe *pgconn.PgError
				if errors.As(want, &wpe) {
					if !errors.As(err, &pe) || pe.Code != wpe.Code {
						t.Errorf("err = %v, want SQLSTATE %s", err, wpe.Code)
					}
				} else if !errors.Is(err, want) {
					t.Errorf("err = %v, want %v", err, want)
				}
			}
		})
	}
}

// A cancelled context ends the waits between tries.
func TestRetrySerializationStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := retrySerialization(ctx, 100, func() error {
		calls++
		return &pgconn.PgError{Code: "40001"}
	})
	if calls != 1 || err == nil {
		t.Fatalf("cancelled: %d tries, err %v; want 1 try and the failure", calls, err)
	}
}

func TestTransientPostgres(t *testing.T) {
	for code, want := range map[string]bool{"40001": true, "40P01": true, "23505": false, "53100": false} {
		err := fmt.Errorf("store: batch: %w", &pgconn.PgError{Code: code})
		if got := Transient(err); got != want {
			t.Errorf("Transient(SQLSTATE %s) = %v, want %v", code, got, want)
		}
	}
	if Transient(&FencedError{Session: "s", Epoch: 1, Current: 2}) {
		t.Error("ErrFenced is transient; it never clears")
	}
}
