//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe reports whether Landlock can confine writes here.
func Probe() LandlockStatus {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return LandlockStatus{Reason: "the kernel has no Landlock system calls"}
	case errno == unix.EOPNOTSUPP:
		return LandlockStatus{Reason: "Landlock is disabled in this kernel (boot with lsm=...,landlock)"}
	case errno != 0:
		return LandlockStatus{Reason: fmt.Sprintf("Landlock probe failed: %v", errno)}
	}
	return LandlockStatus{Available: true, ABI: int(abi)}
}

// writeAccess is every write-like access right of the ABI version.
func writeAccess(abi int) uint64 {
	a := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		a |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		a |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return a
}

// fileAccess is the part of access that applies to files (not
// directories), for rules on device files.
func fileAccess(abi int) uint64 {
	a := uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE)
	if abi >= 3 {
		a |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	return a
}

// landlockNetPortAttr is struct landlock_net_port_attr (ABI 4).
type landlockNetPortAttr struct {
	AllowedAccess uint64
	Port          uint64
}

const landlockRuleNetPort = 2

// restrict confines the calling thread (and what it starts from now on)
// to the rules.
func restrict(rules *LandlockRules) error {
	abi := rules.ABI
	handled := writeAccess(abi)
	hide, read := rules.Hide, rules.Read
	if rules.PrivateProc {
		hide = append(slices.Clone(hide), "/proc")
		read = append(slices.Clone(read), procShared()...)
	}
	reads := readGrants(hide, read)
	if len(reads) > 0 {
		handled |= unix.LANDLOCK_ACCESS_FS_READ_FILE
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	// Passing only the fields the ABI knows keeps the call valid on every
	// version.
	size := unsafe.Sizeof(attr.Handled_access_fs)
	if rules.NoNet && abi >= 4 {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		size += unsafe.Sizeof(attr.Handled_access_net)
	}
	if abi >= landlockScopeABI {
		// An abstract unix socket has no path (the seccomp filter lets it
		// through when the command may use an allowed socket), and a
		// signal could stop or kill an unconfined process of the user:
		// both stay within the domain.
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Offsetof(attr.Scoped) + unsafe.Sizeof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	for _, d := range rules.Write {
		if err := addRule(ruleset, d, writeAccess(abi), fileAccess(abi)); err != nil {
			return err
		}
	}
	for _, d := range reads {
		if err := addRule(ruleset, d, unix.LANDLOCK_ACCESS_FS_READ_FILE, unix.LANDLOCK_ACCESS_FS_READ_FILE); err != nil {
			return err
		}
	}
	if attr.Handled_access_net != 0 {
		for _, port := range rules.ConnectPorts {
			rule := landlockNetPortAttr{AllowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, Port: uint64(port)}
			if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), landlockRuleNetPort, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
				return fmt.Errorf("landlock_add_rule port %d: %w", port, errno)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// procShared are the entries of /proc that are the machine's, not a
// process's: everything but the PID directories and the links into them
// (self, thread-self, mounts, net), which a rule would follow to the
// init's own directory.
func procShared() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Name()[0] >= '0' && e.Name()[0] <= '9' || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		out = append(out, "/proc/"+e.Name())
	}
	return out
}

// addRule allows access beneath dir (fileAcc when dir is a file); a
// missing path is skipped.
func addRule(ruleset int, dir string, access, fileAcc uint64) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		// Rules on files take only file rights.
		access = fileAcc
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", dir, errno)
	}
	return nil
}
