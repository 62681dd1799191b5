//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The socket rule is a seccomp filter: connect(2) to a pathname unix
// socket needs no write access, so a read-only view of the host still
// reaches every server listening on one (tmux, the session bus, docker,
// gpg-agent), and abstract sockets have no path at all. The filter makes
// socket(AF_UNIX, ...) fail with EPERM; socketpair(2) stays allowed, since
// its pair is connected only to itself.
//
// Offsets in struct seccomp_data: the system call number, the audit
// architecture, then the instruction pointer and six 64-bit arguments. A
// classic BPF load reads one native 32-bit word; both supported
// architectures are little-endian, so an argument's low half comes first.
const (
	seccompDataNR   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16
	seccompDataArg1 = 24
	seccompDataArg2 = 32
)

// seccompArch is what the filter needs to know about one architecture.
type seccompArch struct {
	audit uint32
	// x32 is the bit that marks the x32 ABI's system call numbers on
	// x86_64; 0 where there is no such ABI.
	x32 uint32
	// socket, ioUringSetup, pidfdGetfd and ioctl are the system call
	// numbers.
	socket, ioUringSetup, pidfdGetfd, ioctl uint32
}

// nativeArch is the architecture Odin was built for; nil where the filter
// is not available (the mount view still applies in bubblewrap mode).
var nativeArch = func() *seccompArch {
	a := &seccompArch{socket: unix.SYS_SOCKET, ioUringSetup: unix.SYS_IO_URING_SETUP, pidfdGetfd: unix.SYS_PIDFD_GETFD, ioctl: unix.SYS_IOCTL}
	switch runtime.GOARCH {
	case "amd64":
		a.audit, a.x32 = unix.AUDIT_ARCH_X86_64, 0x40000000
	case "arm64":
		a.audit = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	return a
}()

// seccompSupported reports whether the socket filter exists for this
// architecture and the kernel can apply it (PR_GET_SECCOMP fails with
// EINVAL without CONFIG_SECCOMP): every command would fail to start
// otherwise.
var seccompSupported = sync.OnceValue(func() bool {
	if nativeArch == nil {
		return false
	}
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil
})

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	// A system call of another ABI (i386 or x32 on x86_64, arm32 on
	// arm64) has other numbers, and i386's socketcall(2) hides the
	// address family in memory the filter cannot read: the process is
	// killed rather than let through.
	retKill = unix.SECCOMP_RET_KILL_PROCESS
)

// socketRule says which sockets a command may create besides the rule
// that always holds.
type socketRule struct {
	// allowUnix lets AF_UNIX through (a command that may reach a socket
	// on permissions.network.allow_unix_sockets): seccomp cannot see the
	// path connect(2) names, so only the mount view limits what is
	// reachable then.
	allowUnix bool
	// tcpOnly keeps a command without a network namespace of its own (the
	// Landlock fallback, which confines only TCP connects) to TCP:
	// AF_INET and AF_INET6 only as SOCK_STREAM with protocol 0 or TCP, and
	// besides them only AF_UNIX (as allowUnix says) and AF_NETLINK. A UDP
	// datagram, ICMP echo or SCTP association would otherwise leave the
	// host — to the resolver on 127.0.0.53, say, which forwards any name
	// it is asked, DNS exfiltration.
	tcpOnly bool
}

// socketFilter assembles the filter for arch and rule. What always holds:
// io_uring_setup is refused because the ring's IORING_OP_SOCKET creates
// sockets without socket(2), pidfd_getfd because it copies a connected
// socket out of another process, and the terminal ioctls that put input
// into a terminal — TIOCSTI (push a byte into its input queue) and
// TIOCLINUX (paste the console's selection among its subcodes) — because
// a command holding a descriptor of the user's terminal would type a
// line the user's shell runs after Odin exits. The kernel refuses TIOCSTI
// on a terminal that is not the caller's controlling one, which no
// sandboxed command has, but not to a process with CAP_SYS_ADMIN: Odin
// run as root, under Landlock, which drops no capability.
func socketFilter(arch *seccompArch, rule socketRule) ([]bpf.RawInstruction, error) {
	// Jumps name their target; skips are resolved below, since classic
	// BPF only jumps forward by a count. A step with a label is a target.
	type step struct {
		label           string
		ins             bpf.Instruction
		onTrue, onFalse string // "" is the next instruction
	}
	jeq := func(v uint32, t, f string) step {
		return step{ins: bpf.JumpIf{Cond: bpf.JumpEqual, Val: v}, onTrue: t, onFalse: f}
	}
	prog := []step{
		{ins: bpf.LoadAbsolute{Off: seccompDataArch, Size: 4}},
		jeq(arch.audit, "", "kill"),
		{ins: bpf.LoadAbsolute{Off: seccompDataNR, Size: 4}},
	}
	if arch.x32 != 0 {
		prog = append(prog, step{ins: bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: arch.x32}, onTrue: "kill"})
	}
	prog = append(prog, jeq(arch.ioUringSetup, "eperm", ""), jeq(arch.pidfdGetfd, "eperm", ""))
	// ioctl's request is an unsigned int to the kernel: its low half is
	// all there is to compare. The number is reloaded after.
	prog = append(prog, jeq(arch.ioctl, "", "socket"),
		step{ins: bpf.LoadAbsolute{Off: seccompDataArg1, Size: 4}},
		jeq(unix.TIOCSTI, "eperm", ""), jeq(unix.TIOCLINUX, "eperm", "allow"),
		step{label: "socket", ins: bpf.LoadAbsolute{Off: seccompDataNR, Size: 4}})
	if !rule.allowUnix || rule.tcpOnly {
		prog = append(prog, jeq(arch.socket, "", "allow"),
			step{ins: bpf.LoadAbsolute{Off: seccompDataArg0, Size: 4}})
		unixTo := "allow"
		if !rule.allowUnix {
			unixTo = "eperm"
		}
		if !rule.tcpOnly {
			prog = append(prog, jeq(unix.AF_UNIX, unixTo, "allow"))
		} else {
			prog = append(prog, jeq(unix.AF_UNIX, unixTo, ""), jeq(unix.AF_NETLINK, "allow", ""),
				jeq(unix.AF_INET, "inet", ""), jeq(unix.AF_INET6, "inet", "eperm"),
				// The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC
				// are above them.
				step{label: "inet", ins: bpf.LoadAbsolute{Off: seccompDataArg1, Size: 4}},
				step{ins: bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf}},
				jeq(unix.SOCK_STREAM, "", "eperm"),
				step{ins: bpf.LoadAbsolute{Off: seccompDataArg2, Size: 4}},
				jeq(0, "allow", ""), jeq(unix.IPPROTO_TCP, "allow", "eperm"))
		}
	}
	for _, r := range []struct {
		name string
		ret  uint32
	}{{"allow", retAllow}, {"eperm", retEPERM}, {"kill", retKill}} {
		prog = append(prog, step{label: r.name, ins: bpf.RetConstant{Val: r.ret}})
	}
	labels := map[string]int{}
	for i, s := range prog {
		if s.label != "" {
			labels[s.label] = i
		}
	}
	ins := make([]bpf.Instruction, len(prog))
	for i, s := range prog {
		j, ok := s.ins.(bpf.JumpIf)
		if !ok {
			ins[i] = s.ins
			continue
		}
		skip := func(label string) uint8 {
			if label == "" {
				return 0
			}
			return uint8(labels[label] - i - 1)
		}
		j.SkipTrue, j.SkipFalse = skip(s.onTrue), skip(s.onFalse)
		ins[i] = j
	}
	return bpf.Assemble(ins)
}

// filterBytes is the program in the form bwrap --seccomp reads: struct
// sock_filter entries in native byte order.
func filterBytes(raw []bpf.RawInstruction) []byte {
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out
}

// installSocketFilter applies the filter to the calling thread only (no
// SECCOMP_FILTER_FLAG_TSYNC), like restrict: the caller locks its
// goroutine to the thread and forks the command from it, so the command
// inherits the filter while the init's other threads, which relay the
// proxy over a unix socket, keep theirs free.
func installSocketFilter(rule socketRule) error {
	if nativeArch == nil {
		return fmt.Errorf("seccomp: no socket filter for %s", runtime.GOARCH)
	}
	raw, err := socketFilter(nativeArch, rule)
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}

// bwrapFilter is the compiled filter for bwrap --seccomp.
func bwrapFilter(allowUnix bool) ([]byte, error) {
	if nativeArch == nil {
		return nil, fmt.Errorf("seccomp: no socket filter for %s", runtime.GOARCH)
	}
	// bubblewrap's network namespace holds every datagram in.
	raw, err := socketFilter(nativeArch, socketRule{allowUnix: allowUnix})
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return filterBytes(raw), nil
}

// undumpable makes the init's memory closed to ptrace and /proc/PID/mem
// from the command it starts (same user, no capabilities): its other
// threads (the proxy relay's among them) are outside the filter and
// Landlock, and code written into them would be too.
func undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	return nil
}
