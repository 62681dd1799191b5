package store

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// A lease whose recorded holder has exited, but whose lock is still held a
// moment longer (by a child the holder was starting), is waited for and
// taken; one whose holder is alive is refused.
func TestLeaseOfADeadHolderIsTakenOnceReleased(t *testing.T) {
	dir := t.TempDir()
	held, err := AcquireLease(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// A second open of the file, locked, stands for the child's copy;
	// the record names a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	rec, _ := json.Marshal(Holder{PID: dead.Process.Pid, Host: host, Since: time.Now()})
	if err := os.WriteFile(held.path, rec, 0o600); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = unix.Flock(int(held.f.Fd()), unix.LOCK_UN)
		close(released)
	}()
	got, err := AcquireLease(dir, "s1")
	if err != nil {
		t.Fatalf("lease of a dead holder: %v", err)
	}
	select {
	case <-released:
	default:
		t.Fatal("the lease was taken while the lock was still held")
	}
	got.Release()
	held.Release()

	// A live holder (this process) is refused.
	live, err := AcquireLease(dir, "s2")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	if _, err := AcquireLease(dir, "s2"); !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("live holder: %v", err)
	}
}
