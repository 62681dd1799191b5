//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

func startLimited(cmd *exec.Cmd, _ *initLimits) error { return cmd.Start() }

// blockForLimits: bubblewrap is Linux's.
func (p *Process) blockForLimits(*initLimits) error {
	return errors.New("sandbox: limits under bubblewrap need Linux")
}

func (p *Process) setLimitsAndGo(int) {}

// MemTotal is unknown here: limits given as a share of memory are off.
func MemTotal() uint64 { return 0 }

// CgroupStatus: cgroups are Linux's.
func CgroupStatus() string { return "none (not Linux)" }
