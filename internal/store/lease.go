package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrSessionBusy: another process (or another live session in this one)
// holds the session's lease. The error is a *BusyError naming the holder.
var ErrSessionBusy = errors.New("session is in use")

// Holder describes the process holding a session's lease.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Command string    `json:"command"`
}

// BusyError is returned by AcquireLease when the session is held.
type BusyError struct {
	Session string
	Holder  Holder // zero when the holder's record could not be read
}

func (e *BusyError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("session %s is in use by another odin process", e.Session)
	}
	cmd := ""
	if h.Command != "" {
		cmd = fmt.Sprintf(", running %q", h.Command)
	}
	return fmt.Sprintf("session %s is in use by odin pid %d on %s since %s%s",
		e.Session, h.PID, h.Host, h.Since.Local().Format("2006-01-02 15:04:05"), cmd)
}

func (e *BusyError) Is(target error) bool { return target == ErrSessionBusy }

// Lease is the one-writer guarantee of a session: while a process holds it
// no other process (nor another Lease in the same one) can take it. It is
// an flock on <dir>/locks/<session>.lock, so the kernel releases it when
// the holder exits, however it exits (kill -9 included): there is nothing
// to clean up after a crash. The file also records the holder, for the
// message the next taker gets. Release is idempotent.
type Lease struct {
	f    *os.File
	path string
}

// AcquireLease takes the lease of session in the state directory dir (the
// directory of odin.db), without waiting. A held session gives a
// *BusyError (errors.Is ErrSessionBusy).
func AcquireLease(dir, session string) (*Lease, error) {
	if session == "" || strings.ContainsAny(session, `/\`) || session == "." || session == ".." {
		return nil, fmt.Errorf("lease: session id %q: %w", session, ErrInvalid)
	}
	locks := filepath.Join(dir, "locks")
	if err := os.MkdirAll(locks, 0o700); err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	path := filepath.Join(locks, session+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	host, _ := os.Hostname()
	if err := lock(f, path, host); err != nil {
		_ = f.Close()
		return nil, err
	}
	h := Holder{PID: os.Getpid(), Host: host, Since: time.Now().UTC(), Command: commandLine()}
	b, _ := json.Marshal(h)
	// The record is informative only (the lock is the flock), so a failed
	// write (a full disk) does not refuse the lease.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return &Lease{f: f, path: path}, nil
}

// leaseSettle is how long a lease whose recorded holder has died is waited
// for: its lock outlives the process only while a child it was starting
// has not executed yet (the child holds a copy of the descriptor until
// then), or while the kernel tears the process down.
const leaseSettle = 2 * time.Second

// lock takes the flock on f without waiting, unless the process recorded
// as its holder on this host is gone: then the lock is being released, and
// it is tried again for up to leaseSettle.
func lock(f *os.File, path, host string) error {
	deadline := time.Now().Add(leaseSettle)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("lease %s: %w", path, err)
		}
		h := readHolder(path)
		if h.PID <= 0 || h.Host != host || unix.Kill(h.PID, 0) != unix.ESRCH || time.Now().After(deadline) {
			return &BusyError{Session: strings.TrimSuffix(filepath.Base(path), ".lock"), Holder: h}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Release gives the lease up. The file stays: removing it would let a
// process that opened it just before take a lock on an unlinked file while
// a third one creates and locks a new one.
func (l *Lease) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0)
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return f.Close()
}

func readHolder(path string) Holder {
	var h Holder
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &h)
	}
	return h
}

// commandLine is this process's command, shortened for a message.
func commandLine() string {
	if len(os.Args) == 0 {
		return ""
	}
	s := strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
