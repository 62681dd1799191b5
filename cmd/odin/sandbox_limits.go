package main

import (
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/sandbox"
)

// sandboxLimits turns permissions.sandbox_limits into the launcher's
// limits: sizes in bytes, shares of the machine's memory resolved. The
// configuration was validated, so a size that does not parse cannot
// reach here; it would mean no limit.
func sandboxLimits(c config.SandboxLimits) sandbox.Limits {
	total := sandbox.MemTotal()
	size := func(s string) uint64 {
		n, _ := config.SizeBytes(s, total)
		return n
	}
	return sandbox.Limits{Processes: c.Processes, Memory: size(c.Memory), FileSize: size(c.FileSize),
		TmpSize: size(c.TmpSize), CPUTime: c.CPUTime}
}
