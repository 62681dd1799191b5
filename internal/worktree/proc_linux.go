package worktree

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// procStart is the start time of process pid (clock ticks since boot,
// /proc/PID/stat field 22): with the PID it names one process, even once
// the PID is reused. "" when the process does not exist.
func procStart(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	// Fields after the command name start with field 3 (state).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive reports whether the process pid started at start still runs.
func alive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	now := procStart(pid)
	return start == "" || now == "" || now == start
}
