//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe reports whether Landlock can confine writes here.
func Probe() Status {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return Status{Reason: "the kernel has no Landlock system calls"}
	case errno == unix.EOPNOTSUPP:
		return Status{Reason: "Landlock is disabled in this kernel (boot with lsm=...,landlock)"}
	case errno != 0:
		return Status{Reason: fmt.Sprintf("Landlock probe failed: %v", errno)}
	}
	return Status{Available: true, ABI: int(abi)}
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

// execConfined restricts the calling thread to writing beneath dirs and
// replaces the process with argv0 run as argv. It returns only on failure.
func execConfined(dirs []string, name string, argv []string) error {
	st := Probe()
	if !st.Available {
		return errors.New(st.Reason)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	// Landlock and no_new_privs apply to this thread; exec from the same
	// thread carries them into the new program.
	runtime.LockOSThread()
	if err := restrict(st.ABI, dirs); err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}

func restrict(abi int, dirs []string) error {
	handled := writeAccess(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	// Passing only the first field's size keeps the call valid on every
	// ABI version.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr.Handled_access_fs), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	for _, d := range dirs {
		if err := addRule(ruleset, d, handled); err != nil {
			return err
		}
	}
	// Device files (/dev/null, a terminal) stay writable, but nothing can
	// be created or removed there.
	if err := addRule(ruleset, "/dev", fileAccess(abi)); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// addRule allows access beneath dir; a missing dir is skipped.
func addRule(ruleset int, dir string, access uint64) error {
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
		access &= uint64(unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE)
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_add_rule %s: %w", dir, errno)
	}
	return nil
}
