//go:build !linux

package sandbox

import (
	"errors"
	"slices"
	"syscall"
	"time"
)

// ErrNoShell is returned when the shell a Process runs cannot be found
// among its processes.
var ErrNoShell = errors.New("sandbox: the shell is not among the process's processes")

// SignalForeground needs /proc: outside Linux it finds no shell.
func (p *Process) SignalForeground(int, syscall.Signal) (int, error) { return 0, ErrNoShell }

// KillTrees stops pids themselves outside Linux: finding what they
// started needs /proc. A PID under 2 is never a job: kill(2) would take
// -1 as every process of the user's and 0 as Odin's own group.
func (p *Process) KillTrees(pids []int, grace time.Duration) []int {
	pids = slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return pid <= 1 })
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	time.Sleep(grace)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}
