package tools

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestShellPostDropsFunctionsThroughAnInterrupt: Odin interrupts the
// shell's process group until the call's done record comes, so a timeout
// that passes while __odin_post runs reaches the subshell that lists the
// command's functions. That subshell ignores SIGINT; were it interrupted,
// the list would be empty and the function would outlive its call. The
// stand-in for declare interrupts the group from inside the subshell, as
// Odin's SIGINT would arrive there.
func TestShellPostDropsFunctionsThroughAnInterrupt(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	script := shellPrelude + `
f() { :; }
declare() { kill -INT 0; builtin declare "$@"; }
__odin_post NONCE 0
type f >/dev/null 2>&1 && echo f-survived || echo f-dropped
`
	cmd := exec.Command(bash, "-c", script)
	// Its own process group: kill 0 must not reach the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "f-dropped") || !strings.Contains(string(out), "dropped: ") {
		t.Fatalf("the function outlived __odin_post under an interrupt:\n%s", out)
	}
}
