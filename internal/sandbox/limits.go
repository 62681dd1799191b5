package sandbox

import (
	"fmt"
	"strings"
	"syscall"
	"time"
)

// LimitsKey is the configuration key of the resource limits, for the
// notes that tell the model (and the user) which limit a command hit.
const LimitsKey = "permissions.sandbox_limits"

// Limits bound what one launched process tree may take of the machine.
// The init helper sets them as rlimits (soft and hard: the command cannot
// raise them, and has no capability to) before it starts the command;
// zero fields set nothing.
type Limits struct {
	// Processes is how many tasks (processes and threads) the command may
	// add to those its user already runs where they are counted
	// (RLIMIT_NPROC): in bubblewrap's own user namespace, only the
	// command's; under Landlock, every process of the user. The kernel
	// never applies it to root.
	Processes int
	// Memory is each process's data size in bytes (RLIMIT_DATA: heap and
	// private writable mappings). Unlike the address space, it leaves the
	// large reservations of the race detector, V8 and the JVM alone.
	Memory uint64
	// FileSize is the largest file in bytes a process may write
	// (RLIMIT_FSIZE); past it the write fails and SIGXFSZ stops it.
	FileSize uint64
	// CPUTime is each process's CPU time (RLIMIT_CPU, whole seconds).
	CPUTime time.Duration
	// TmpSize is the size in bytes of bubblewrap's private /tmp, a tmpfs
	// (held in memory); 0 leaves the kernel's default, half the memory.
	TmpSize uint64
}

// rlimited reports whether the init must set any rlimit.
func (l Limits) rlimited() bool {
	return l.Processes > 0 || l.Memory > 0 || l.FileSize > 0 || l.CPUTime > 0
}

// String says what the limits bound, for odin doctor.
func (l Limits) String() string {
	var parts []string
	if l.Processes > 0 {
		parts = append(parts, fmt.Sprintf("%d more processes and threads (not for root)", l.Processes))
	}
	if l.Memory > 0 {
		parts = append(parts, bytesText(l.Memory)+" of data per process")
	}
	if l.FileSize > 0 {
		parts = append(parts, "files up to "+bytesText(l.FileSize))
	}
	if l.TmpSize > 0 {
		parts = append(parts, "a private /tmp of "+bytesText(l.TmpSize)+" (bubblewrap)")
	}
	if l.CPUTime > 0 {
		parts = append(parts, l.CPUTime.String()+" of CPU per process")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// initLimits are the rlimits the init helper sets (initSpec.Limits).
type initLimits struct {
	Processes int    `json:"nproc,omitempty"`
	Memory    uint64 `json:"data,omitempty"`
	FileSize  uint64 `json:"fsize,omitempty"`
	CPU       uint64 `json:"cpu,omitempty"` // seconds
}

func (l Limits) forInit() *initLimits {
	if !l.rlimited() {
		return nil
	}
	il := &initLimits{Processes: l.Processes, Memory: l.Memory, FileSize: l.FileSize}
	if l.CPUTime > 0 {
		il.CPU = uint64(max(l.CPUTime.Round(time.Second), time.Second) / time.Second)
	}
	return il
}

// LimitNote says which resource limit a command that exited with code
// (128+N for a signal, as shells report it) and printed output most
// likely hit, and how to raise it, or "" when nothing points at one. The
// kernel reports a limit only as a failed call (EAGAIN from fork, ENOMEM,
// EFBIG, ENOSPC) or a signal (SIGXFSZ, SIGXCPU), which the command's
// own programs print, so the note reads both.
func (l *Launcher) LimitNote(output string, code int) string {
	l = l.get()
	lim := l.opts.Limits
	kind := l.Status().Kind
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(output, s) {
				return true
			}
		}
		return false
	}
	// bash names a child's death by SIGXFSZ or SIGXCPU itself, and the
	// script may go on to exit 0; anything else counts only when the
	// command failed (a grep for "out of memory" succeeds).
	failed := code != 0
	switch {
	case lim.FileSize > 0 && (code == 128+int(syscall.SIGXFSZ) || has("File size limit exceeded") || failed && has("File too large", "EFBIG")):
		return fmt.Sprintf("the sandbox stopped a process writing a file past its file size limit of %s (%s.file_size); if the command must write a larger file, ask the user to raise it", bytesText(lim.FileSize), LimitsKey)
	case lim.CPUTime > 0 && (code == 128+int(syscall.SIGXCPU) || has("CPU time limit exceeded")):
		return fmt.Sprintf("the sandbox stopped a process that used its CPU time limit of %s (%s.cpu_time); split the work, or ask the user to raise it", lim.CPUTime, LimitsKey)
	case lim.Processes > 0 && failed && (has("fork: retry", "Cannot fork", "can't fork", "failed to create new OS thread",
		"can't start new thread", "spawn EAGAIN") ||
		has("Resource temporarily unavailable", "EAGAIN") && has("fork", "thread", "spawn", "clone")):
		return fmt.Sprintf("the sandbox limits a command to %d more processes and threads (%s.processes), and the command reached it; run fewer jobs at once (make -j, go test -p), or ask the user to raise it", lim.Processes, LimitsKey)
	case lim.Memory > 0 && failed && has("Cannot allocate memory", "MemoryError", "out of memory", "bad_alloc", "ENOMEM", "memory allocation of"):
		return fmt.Sprintf("the sandbox limits each process of a command to %s of memory (%s.memory); if the command needs more, ask the user to raise it", bytesText(lim.Memory), LimitsKey)
	case lim.TmpSize > 0 && kind == KindBubblewrap && failed && has("No space left on device", "ENOSPC"):
		return fmt.Sprintf("the sandbox's private /tmp holds %s (%s.tmp_size); write large files into the project instead, or ask the user to raise it", bytesText(lim.TmpSize), LimitsKey)
	}
	return ""
}

// bytesText writes n bytes in the largest binary unit that keeps it
// readable ("16 GiB", "1.5 GiB", "300 MiB").
func bytesText(n uint64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
