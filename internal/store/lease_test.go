package store

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLeaseOneHolder(t *testing.T) {
	dir := t.TempDir()
	first, err := AcquireLease(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLease(dir, "s1")
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("second lease: err = %v, want a BusyError", err)
	}
	if busy.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("busy error %q does not name the holder pid %d", err, os.Getpid())
	}
	other, err := AcquireLease(dir, "s2")
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	defer other.Release()
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	again, err := AcquireLease(dir, "s1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
}

func TestLeaseRejectsPathIDs(t *testing.T) {
	for _, id := range []string{"", "..", "a/b", `a\b`} {
		if _, err := AcquireLease(t.TempDir(), id); !errors.Is(err, ErrInvalid) {
			t.Errorf("AcquireLease(%q) = %v, want ErrInvalid", id, err)
		}
	}
}
