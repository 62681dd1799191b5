//go:build !unix

package policy

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist; cancelling
// kills the hook's shell only.
func setProcessGroup(*exec.Cmd) {}
