package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeReaper makes the helper the subreaper of everything the command
// starts (orphans, setsid escapees included, are re-parented to it, so
// killTree finds them) and has it signalled when Odin dies.
func becomeReaper(parent int) error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return err
	}
	if parent == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return err
	}
	// Odin may have died before the signal was armed.
	if os.Getppid() != parent {
		return errors.New("odin exited before the command started")
	}
	return nil
}

// sessionAttr starts a process in a new session (no controlling terminal)
// that receives sig when Odin's thread that started it dies.
func sessionAttr(sig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: sig}
}

func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// descendants lists the live processes below pid, from /proc. It reads
// on another thread than the caller's: the init's main thread is confined
// by Landlock (LandlockRules.PrivateProc keeps it out of /proc/PID), and
// Go starts new threads from an unconfined one.
func descendants(pid int) []int {
	return unconfined(func() []int { return scanDescendants(pid) })
}

// unconfined runs f on a goroutine of its own, so never on the calling
// goroutine's locked (Landlock-confined) thread, and returns its result.
func unconfined[T any](f func() T) T {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	return <-ch
}

func scanDescendants(pid int) []int {
	_, children := procTable()
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

func signalTree(sig syscall.Signal) {
	for _, p := range descendants(os.Getpid()) {
		_ = syscall.Kill(p, sig)
	}
}

// killTree kills every descendant until none is left, reaping them.
func killTree() {
	self := os.Getpid()
	for range 400 {
		pids := descendants(self)
		reap()
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
