package sandbox

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// fileIdentity names path's file as it is now: a replaced or upgraded
// binary, or one whose setuid bit changed, gets another.
func fileIdentity(path string) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d mode=%o uid=%d gid=%d", st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano(), st.Mode, st.Uid, st.Gid), true
}

// probeHostFiles are read into the fingerprint when present: the boot
// (kernel and every sysctl reset), the sysctls that allow or limit
// unprivileged namespaces, and the process's LSM label.
var probeHostFiles = []string{
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/user/max_mnt_namespaces",
	"/proc/sys/user/max_pid_namespaces",
	"/proc/sys/user/max_net_namespaces",
	"/proc/sys/user/max_ipc_namespaces",
	"/proc/sys/user/max_uts_namespaces",
	"/proc/sys/user/max_cgroup_namespaces",
	"/proc/self/attr/current",
}

// probeStatusFields are the lines of /proc/self/status that decide what
// this process may do: its seccomp filters, no_new_privs and capabilities.
var probeStatusFields = []string{"Uid:", "Gid:", "CapPrm:", "CapEff:", "CapBnd:", "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"}

// hostState describes the kernel boot, the namespaces this process runs
// in (another container has others), its privileges and the sysctls that
// gate namespaces. It reads a few small /proc files.
func hostState() (string, bool) {
	var b strings.Builder
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", false
	}
	fmt.Fprintf(&b, "boot %s\n", strings.TrimSpace(string(boot)))
	for _, ns := range []string{"user", "mnt", "pid", "net", "ipc", "uts", "cgroup"} {
		link, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil && (ns == "user" || ns == "mnt") {
			return "", false
		}
		fmt.Fprintf(&b, "ns %s %s\n", ns, link)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "", false
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		for _, f := range probeStatusFields {
			if strings.HasPrefix(line, f) {
				fmt.Fprintf(&b, "status %s\n", strings.Join(strings.Fields(line), " "))
			}
		}
	}
	for _, p := range probeHostFiles {
		data, err := os.ReadFile(p)
		v := "-"
		if err == nil {
			v = strings.Join(strings.Fields(string(data)), " ")
		}
		fmt.Fprintf(&b, "sysctl %s %s\n", p, v)
	}
	return b.String(), true
}
