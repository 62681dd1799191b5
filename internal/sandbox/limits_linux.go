package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// setLimits sets the rlimits of pid (0: the calling process). The process
// limit counts tasks of the real user where the kernel does, tasks of
// them already (userTasks, or the tasks of a fresh user namespace), so
// the command gets Processes more than already run.
func setLimits(pid int, l *initLimits, tasks int) error {
	set := func(res int, what string, v uint64) error {
		if err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
			return fmt.Errorf("prlimit(%s, %d): %w", what, v, err)
		}
		return nil
	}
	if l.Memory > 0 {
		if err := set(unix.RLIMIT_DATA, "RLIMIT_DATA", l.Memory); err != nil {
			return err
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", l.FileSize); err != nil {
			return err
		}
	}
	if l.CPU > 0 {
		// The kernel sends SIGXCPU at the soft limit and SIGKILL at the
		// hard one, checking the hard one first: the grace lets the
		// process die of SIGXCPU, which says why.
		lim := unix.Rlimit{Cur: l.CPU, Max: l.CPU + cpuGrace}
		if err := unix.Prlimit(pid, unix.RLIMIT_CPU, &lim, nil); err != nil {
			return fmt.Errorf("prlimit(RLIMIT_CPU, %d): %w", l.CPU, err)
		}
	}
	if l.Processes > 0 {
		n := uint64(tasks + l.Processes)
		var cur unix.Rlimit
		// Never above what the user had: the limit only narrows.
		if unix.Prlimit(pid, unix.RLIMIT_NPROC, nil, &cur) == nil && cur.Max < n {
			n = cur.Max
		}
		if err := set(unix.RLIMIT_NPROC, "RLIMIT_NPROC", n); err != nil {
			return err
		}
	}
	return nil
}

// blockForLimits passes bwrap the read end of a pipe for --block-fd
// (Plan.LimitsByBlock): bwrap's child, the namespace's PID 1, sets the
// sandbox up, then waits on it before it execs the command; readInfo
// sets the limits on it meanwhile (setLimitsAndGo). Starting Odin's init
// only to set them cost a second exec per command.
func (p *Process) blockForLimits(l *initLimits) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	p.blockR, p.blockW, p.limits = r, w, l
	p.Cmd.ExtraFiles = append(p.Cmd.ExtraFiles, r)
	return nil
}

// setLimitsAndGo sets the limits on pid, bwrap's child waiting on
// --block-fd, and lets it go on; a child whose limits could not be set is
// killed before the command runs.
func (p *Process) setLimitsAndGo(pid int) {
	if err := setLimits(pid, p.limits, tasksBeside(pid)); err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
	} else {
		_, _ = p.blockW.Write([]byte{1})
	}
	_ = p.blockW.Close()
	p.blockW = nil
}

// tasksBeside counts the tasks RLIMIT_NPROC counts for pid now: the
// kernel counts them per user namespace, and bwrap's child is alone in
// the one bwrap made for it; a bwrap that made none (setuid, without user
// namespaces) leaves it among every task of the user.
func tasksBeside(pid int) int {
	self, err := os.Readlink("/proc/self/ns/user")
	if err == nil {
		child, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user")
		if err == nil && child != self {
			return max(threadsOf(strconv.Itoa(pid)), 1)
		}
	}
	return userTasks(os.Getuid())
}

// cpuGrace is the seconds between SIGXCPU and SIGKILL.
const cpuGrace = 5

// startLimited starts cmd with the rlimits: traced, so that it stops at
// its execve, before the command's first instruction; the limits are set
// on it while it is stopped, and it is let go. The init itself stays
// unlimited: a fork bomb that took every process slot, or a limit on
// memory, would otherwise keep the init's own runtime from starting a
// thread, and a dead init leaves the command's orphans to nobody. Where
// the kernel refuses the trace (Yama's ptrace_scope 2 or 3) the limits
// are set on the init before the command starts instead.
func startLimited(cmd *exec.Cmd, l *initLimits) error {
	cmd.SysProcAttr.Ptrace = true
	err := cmd.Start()
	// Counted off the calling thread, which Landlock may keep out of
	// /proc/PID (see descendants).
	tasks := unconfined(func() int { return userTasks(os.Getuid()) })
	if errors.Is(err, unix.EPERM) {
		cmd.SysProcAttr.Ptrace = false
		if err := setLimits(0, l, tasks); err != nil {
			return err
		}
		return cmd.Start()
	}
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	fail := func(err error) error {
		_ = unix.Kill(pid, unix.SIGKILL)
		return err
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, unix.WALL, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("wait for the command's execve: %w", err))
		}
		break
	}
	if !ws.Stopped() {
		return fail(fmt.Errorf("the command did not stop at its execve (status %#x)", ws))
	}
	if err := setLimits(pid, l, tasks); err != nil {
		return fail(err)
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return fail(fmt.Errorf("ptrace(PTRACE_DETACH): %w", err))
	}
	return nil
}

// userTasks counts the tasks (threads included, as RLIMIT_NPROC does)
// of uid among the processes this /proc shows. A process's directory
// belongs to its effective user (to root when it is not dumpable: those
// of the user's processes, Odin among them, are left out, which makes
// the limit a little tighter); only those of uid are read, so a command
// costs one stat per process of the machine.
func userTasks(uid int) int {
	dir, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0
	}
	total := 0
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+n, &st) != nil || int(st.Uid) != uid {
			continue
		}
		total += max(threadsOf(n), 1)
	}
	return total
}

// threadsOf reads num_threads, the 20th field of /proc/PID/stat (the 18th
// after the command name, which may hold spaces and parentheses).
func threadsOf(pid string) int {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 18 {
		return 0
	}
	n, _ := strconv.Atoi(string(f[17]))
	return n
}

// MemTotal is the machine's memory in bytes (0 when unknown), for limits
// given as a share of it.
func MemTotal() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// CgroupStatus says whether a cgroup v2 subtree with the pids and memory
// controllers is delegated to this process (what whole-tree limits would
// need: Odin does not create cgroups), for odin doctor.
func CgroupStatus() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	path := ""
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "none (cgroup v1 only)"
	}
	mount := "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
		mount = "/sys/fs/cgroup/unified" // the hybrid layout
	}
	dir := filepath.Join(mount, path)
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "none (no cgroup v2 hierarchy mounted)"
	}
	fields := strings.Fields(string(ctl))
	if !slices.Contains(fields, "pids") || !slices.Contains(fields, "memory") {
		return fmt.Sprintf("v2 at %s without the pids and memory controllers", dir)
	}
	if unix.Access(dir, unix.W_OK) != nil {
		return fmt.Sprintf("v2 at %s, not delegated to this user", dir)
	}
	return fmt.Sprintf("v2 at %s, delegated (not used by Odin)", dir)
}
