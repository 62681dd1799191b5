package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNoShell is returned when the shell a Process runs cannot be found
// among its processes (it exited, or its PID is not the one given).
var ErrNoShell = errors.New("sandbox: the shell is not among the process's processes")

// procInfo is what Odin reads of one sandboxed process in /proc.
type procInfo struct {
	pid, ppid, pgid int
	// start is when the process started (stat's starttime, in clock
	// ticks since boot): with pid, it names one process for good, where a
	// PID alone may be reused once the process is gone.
	start uint64
	// nspid is the PID the process has in its innermost PID namespace
	// (bubblewrap's; the host's under Landlock or unconfined), and depth
	// how many namespaces deep that is as Odin sees it (NSpid's fields).
	nspid, depth int
	// ignInt: the process ignores SIGINT.
	ignInt bool
}

// tree lists the process (the launched bwrap, init helper or command)
// and every live descendant, as Odin sees them in /proc. Odin runs
// unconfined, so the sandboxed command needs no /proc/PID for this
// (LandlockRules.PrivateProc closes them under the Landlock fallback);
// under Landlock and bubblewrap alike everything the command starts stays
// below the launched process, adopted by the subreaper or namespace init.
func (p *Process) tree() []procInfo {
	if p == nil || p.Cmd == nil || p.Process == nil {
		return nil
	}
	all, children := procTable()
	root, ok := all[p.Process.Pid]
	// The launched process is Odin's child until it is reaped; a process
	// holding its PID after that is someone else's.
	if !ok || root.ppid != os.Getpid() {
		return nil
	}
	out := []procInfo{root}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i].pid] {
			out = append(out, all[c])
		}
	}
	for i := range out {
		out[i].nspid, out[i].depth, out[i].ignInt = readStatus(out[i].pid)
	}
	return out
}

// sandboxDepth is the depth of the PID namespace the command runs in:
// bubblewrap's, below the launched bwrap, or the launched process's own
// (Landlock, unconfined). A PID the command reports is of that namespace;
// a process of a namespace the command nested may reuse the number.
func (p *Process) sandboxDepth(procs []procInfo) int {
	if len(procs) == 0 {
		return 0
	}
	if ns := p.namespace(); ns != nil {
		for _, pi := range procs {
			if pi.pid == ns.pid {
				return pi.depth
			}
		}
	}
	return procs[0].depth
}

// procTable reads every live process in /proc: each by PID, and the
// children of each PID. The reaper (scanDescendants) and a shell's
// process tree (tree) both start from it.
func procTable() (all map[int]procInfo, children map[int][]int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	all, children = map[int]procInfo{}, map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pi, ok := readStat(pid)
		if !ok {
			continue
		}
		all[pid] = pi
		children[pi.ppid] = append(children[pi.ppid], pid)
	}
	return all, children
}

// readStat reads pid's parent and process group; ok is false for a
// process gone or a zombie.
func readStat(pid int) (procInfo, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	// After the name: state, ppid, pgrp, … starttime (stat's 22nd field).
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, start: start}, true
}

// signalScanned sends sig to the process the scan found as pi, and to no other:
// Odin signals from outside the sandbox, so a PID freed since the scan
// and reused by a process of the user's must not be hit. A pidfd pins
// whatever process holds the PID now; it is signalled only if it started
// when the scanned one did. On a kernel without pidfds (before 5.3) the
// same check is made just before a plain kill.
func signalScanned(pi procInfo, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(pi.pid, 0)
	if err != nil {
		if !errors.Is(err, unix.ENOSYS) {
			return false // gone
		}
		now, ok := readStat(pi.pid)
		return ok && now.start == pi.start && syscall.Kill(pi.pid, sig) == nil
	}
	defer unix.Close(fd)
	if now, ok := readStat(pi.pid); !ok || now.start != pi.start {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// readStatus reads pid's PID in its own namespace (NSpid's last field,
// pid itself on kernels without NSpid), that namespace's depth and
// whether pid ignores SIGINT.
func readStatus(pid int) (nspid, depth int, ignInt bool) {
	nspid, depth = pid, 1
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nspid, depth, false
	}
	for line := range strings.Lines(string(data)) {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch {
		case k == "NSpid" && len(f) > 0:
			if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
				nspid, depth = n, len(f)
			}
		case k == "SigIgn" && len(f) == 1:
			mask, _ := strconv.ParseUint(f[0], 16, 64)
			ignInt = mask&(1<<(syscall.SIGINT-1)) != 0
		}
	}
	return nspid, depth, ignInt
}

// SignalForeground sends sig to the foreground command of a shell the
// process runs without job control (ShellSession's bash): every process
// of the shell's process group below the launched process except the
// shell itself, the shell's parent (the init helper, in the same group)
// and the processes that ignore SIGINT (a non-interactive bash starts its
// background jobs so). shell is the shell's PID as the shell sees it
// ($$: under bubblewrap, in its PID namespace). It returns how many
// processes it signalled, and ErrNoShell when the shell is gone.
//
// Odin does this rather than a watchdog inside the sandbox: finding the
// foreground command needs every process's /proc/PID, which the Landlock
// fallback cannot open to a command without opening the whole machine's.
func (p *Process) SignalForeground(shell int, sig syscall.Signal) (int, error) {
	procs := p.tree()
	depth := p.sandboxDepth(procs)
	var sh *procInfo
	for i := range procs {
		if procs[i].nspid == shell && procs[i].depth == depth {
			sh = &procs[i]
			break
		}
	}
	if sh == nil {
		return 0, ErrNoShell
	}
	n := 0
	for _, pi := range procs {
		if pi.pgid != sh.pgid || pi.pid == sh.pid || pi.pid == sh.ppid || pi.ignInt {
			continue
		}
		if signalScanned(pi, sig) {
			n++
		}
	}
	return n, nil
}

// KillTrees stops the processes pids (as the sandbox sees them, like a
// shell's `jobs -p`) and everything they started: SIGTERM, then SIGKILL
// to what is left after grace. It returns the processes it signalled, as
// the sandbox sees them. Only processes below the launched process are
// touched, whatever pids says.
func (p *Process) KillTrees(pids []int, grace time.Duration) []int {
	want := map[int]bool{}
	for _, pid := range pids {
		// The shell reports these, and a command can make it report any
		// number: 1 is the sandbox's init, never a job.
		if pid > 1 {
			want[pid] = true
		}
	}
	// hit are the processes signalled so far, by host PID: a job's
	// leader that dies first leaves its children to the subreaper, no
	// longer below it, and they must still be found on the next scan.
	hit := map[int]bool{}
	targets := func() []procInfo {
		var out []procInfo
		procs := p.tree()
		depth := p.sandboxDepth(procs)
		for _, pi := range procs { // parents come before their children
			if want[pi.nspid] && pi.depth == depth || hit[pi.pid] || hit[pi.ppid] {
				hit[pi.pid] = true
				out = append(out, pi)
			}
		}
		return out
	}
	seen := map[int]bool{}
	var killed []int
	note := func(ts []procInfo, sig syscall.Signal) {
		for _, pi := range ts {
			signalScanned(pi, sig)
			if !seen[pi.nspid] {
				seen[pi.nspid] = true
				killed = append(killed, pi.nspid)
			}
		}
	}
	note(targets(), syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if len(targets()) == 0 {
			return killed
		}
	}
	for range 20 {
		ts := targets()
		if len(ts) == 0 {
			break
		}
		note(ts, syscall.SIGKILL)
		time.Sleep(10 * time.Millisecond)
	}
	return killed
}
