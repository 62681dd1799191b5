package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// closeOwnProc makes Odin's /proc/PID entries (environ, mem, fd, cwd,
// maps) closed to processes of the same user: the kernel lets only a
// process with CAP_SYS_PTRACE read those of a non-dumpable process. Odin
// holds the provider keys and MCP tokens in its environment and memory,
// and without a PID namespace (the Landlock fallback, an unconfined run)
// every command sees Odin's /proc/PID: Landlock's ptrace rule keeps out
// /proc/PID/mem but not /proc/PID/environ (measured on Linux 6.18). Odin
// itself still reads its own /proc/self (the kernel lets a process into
// its own entries whatever its dumpable flag), and the children it
// starts are dumpable again from their execve on. The cost: no core dump
// of Odin and no debugger attached to it without root, unless
// ODIN_DUMPABLE=1.
func closeOwnProc() error {
	if os.Getenv(dumpableEnv) == "1" {
		return nil
	}
	return undumpable()
}

// dropCapabilities empties the calling thread's capability sets and its
// bounding set, so that nothing it starts from now on has a capability,
// root included (a root process's execve regains only what the bounding
// set keeps). Landlock leaves root's capabilities alone: with
// CAP_SYS_PTRACE a command reads any process's /proc/PID/environ (Odin's,
// non-dumpable, too), with CAP_SYS_RESOURCE it lifts its resource limits,
// with CAP_SYS_MODULE it loads a kernel module. bubblewrap drops them all
// (--cap-drop ALL); the fallback now does the same. Without CAP_SETPCAP
// (not root) the bounding set cannot be changed, and there is nothing in
// it a process without capabilities could use at execve anyway.
func dropCapabilities() error {
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// lastCap is the highest capability number this kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && n < 64 {
			return n
		}
	}
	return 63
}
