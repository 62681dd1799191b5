//go:build !linux

package sandbox

import "time"

// nsHandle stands for bwrap's namespace init; bwrap runs on Linux only.
type nsHandle struct{ pid int }

func openNS(pid int) *nsHandle           { return &nsHandle{pid: pid} }
func (h *nsHandle) kill(int)             {}
func (h *nsHandle) wait(d time.Duration) {}
func (h *nsHandle) close()               {}
