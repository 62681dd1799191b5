//go:build !linux

package sandbox

import "os/exec"

func startLimited(cmd *exec.Cmd, _ *initLimits) error { return cmd.Start() }

// MemTotal is unknown here: limits given as a share of memory are off.
func MemTotal() uint64 { return 0 }

// CgroupStatus: cgroups are Linux's.
func CgroupStatus() string { return "none (not Linux)" }
