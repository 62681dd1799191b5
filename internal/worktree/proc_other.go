//go:build !linux

package worktree

import "syscall"

// procStart is unknown off Linux: the PID alone names the owner.
func procStart(int) string { return "" }

// alive reports whether a process with this PID exists.
func alive(pid int, _ string) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
