package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// dumpableEnv, set to 1 in Odin's environment, keeps Odin dumpable: for a
// developer who attaches a debugger (dlv attach) or wants a core dump.
const dumpableEnv = "ODIN_DUMPABLE"

// LandlockStatus says whether Landlock can confine writes here.
type LandlockStatus struct {
	// Available is true when Landlock can confine writes.
	Available bool
	// ABI is the kernel's Landlock ABI version (0 when unavailable).
	ABI int
	// Reason explains why Landlock is unavailable.
	Reason string
}

// Main runs the sandbox's init helper when the process was started as one
// by a Launcher, or a handed-off command (Process.Handoff), and never
// returns then; in any other process it returns at
// once. Call it first thing in main (and in TestMain of packages whose
// tests launch commands).
func Main() {
	if len(os.Args) == 3 && os.Args[1] == execArg {
		os.Exit(runHandoff(os.Args[2]))
	}
	if len(os.Args) >= 2 && os.Args[1] == goCacheProgArg {
		os.Exit(runGoCacheProg(os.Args[2:]))
	}
	if len(os.Args) < 4 || os.Args[1] != initArg {
		// Odin itself: its /proc/PID entries hold its secrets. The call
		// does not fail on Linux (and is a no-op elsewhere); Odin runs
		// on without it rather than refuse to start.
		_ = closeOwnProc()
		return
	}
	os.Exit(runInit(os.Args[2], os.Args[3:]))
}

// runInit is the helper: it confines itself, relays the proxy, runs the
// command as its child and, when the command ends or the helper is
// signalled or orphaned, kills every process the command left behind.
func runInit(specJSON string, rest []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "odin sandbox: %v\n", err)
		return 126
	}
	var is initSpec
	if err := json.Unmarshal([]byte(specJSON), &is); err != nil {
		return fail(err)
	}
	if len(rest) < 2 || rest[0] != "--" {
		return fail(errors.New("no command"))
	}
	argv := rest[1:]
	if err := becomeReaper(is.ParentPID); err != nil {
		return fail(err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	env := os.Environ()
	if is.RelayFD > 0 {
		// Before the command starts: it must not inherit the relay.
		if err := serveRelay(is.RelayFD); err != nil {
			return fail(err)
		}
	}
	if is.ProxySocket != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(fmt.Errorf("proxy relay: %w", err))
		}
		go forward(ln, is.ProxySocket)
		env = append(env, proxyEnv("http://127.0.0.1:"+portOf(ln))...)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(err)
	}
	// Landlock and the socket filter confine one thread and what it
	// starts: the command is forked from this locked thread, after them.
	runtime.LockOSThread()
	if is.Landlock != nil || is.Seccomp != nil || is.RelayFD > 0 {
		// The other threads stay unconfined: memory the command could
		// write through ptrace or /proc/PID/mem would run there. The
		// relay's end, too, is for Odin alone.
		if err := undumpable(); err != nil {
			return fail(err)
		}
	}
	if is.Landlock != nil {
		if err := restrict(is.Landlock); err != nil {
			return fail(err)
		}
	}
	if is.Seccomp != nil {
		// Where Landlock confines TCP connects, it confines nothing else
		// of the network: the filter keeps the command to TCP.
		rule := socketRule{allowUnix: is.Seccomp.AllowUnix, tcpOnly: is.Landlock != nil && is.Landlock.NoNet}
		if err := installSocketFilter(rule); err != nil {
			return fail(err)
		}
	}
	if is.Landlock != nil {
		// Last: Landlock and the filter need no capability, but root's
		// would get around both (see dropCapabilities).
		if err := dropCapabilities(); err != nil {
			return fail(err)
		}
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = childAttr()
	start := cmd.Start
	if is.Limits != nil {
		start = func() error { return startLimited(cmd, is.Limits) }
	}
	if err := start(); err != nil {
		return fail(err)
	}
	// waited is closed once Wait returned; waitErr is read only after.
	var waitErr error
	waited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(waited) }()
	code := 0
	select {
	case <-waited:
		code = exitStatus(waitErr)
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				// Die the way the command died, so the caller sees the
				// signal and not an exit status.
				killTree()
				signal.Reset()
				_ = syscall.Kill(os.Getpid(), ws.Signal())
			}
		}
	case s := <-sigs:
		// The signal decides the status; whether the command stopped in
		// time only decides how long to wait before killTree.
		signalTree(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(500 * time.Millisecond):
		}
		code = 128 + int(s.(syscall.Signal))
	}
	killTree()
	return code
}

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 126
}
