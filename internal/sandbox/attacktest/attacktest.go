// Package attacktest starts what the sandbox's attack tests try to reach
// from inside a sandbox: a process of the user's, outside any sandbox,
// holding secrets in its environment and on its command line, and a unix
// socket whose name is a secret (it shows in /proc/net/unix). Both the
// sandbox's own tests and the tools' (ShellSession) use it, so that each
// attack is graded against the same bait.
package attacktest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Bait is what UserProcess started: the process's PID and the secrets a
// sandboxed command must never read.
type Bait struct {
	PID int
	// Env is in the process's environment (USER_API_TOKEN), Arg on its
	// command line (--password=…), Socket the name of a listening unix
	// socket.
	Env, Arg, Socket string
}

// UserProcess starts a sleeping python3 outside any sandbox with the
// secrets of the returned Bait, and a unix socket under /var/tmp named by
// its Socket secret; both are stopped when t ends. It skips t where
// python3 or /var/tmp is missing.
func UserProcess(t testing.TB) Bait {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	id := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	b := Bait{Env: "ENVSECRET-" + id, Arg: "ARGSECRET-" + id, Socket: "SOCKSECRET-" + id}
	user := exec.Command("python3", "-c", "import time; time.sleep(120)", "--password="+b.Arg)
	user.Env = append(os.Environ(), "USER_API_TOKEN="+b.Env)
	if err := user.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = user.Process.Kill(); _ = user.Wait() })
	b.PID = user.Process.Pid
	// Not t.TempDir: the socket's path must fit a sun_path and lie
	// outside the project the sandbox is given.
	dir, err := os.MkdirTemp("/var/tmp", "odin-attack-")
	if err != nil {
		t.Skipf("no /var/tmp for the socket: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, b.Socket))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return b
}
