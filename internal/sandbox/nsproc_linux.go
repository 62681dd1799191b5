package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nsHandle pins bwrap's namespace init, the process whose death takes the
// whole PID namespace down, by a pidfd: a pid number may be reused once
// the process is reaped, a pidfd never names another process.
type nsHandle struct {
	pid int
	mu  sync.Mutex // kill, wait and close may race (Shutdown, Release)
	fd  int        // -1 when pidfd_open is unavailable or closed
}

func openNS(pid int) *nsHandle {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		fd = -1
	}
	return &nsHandle{pid: pid, fd: fd}
}

// kill sends SIGKILL to the namespace's init. Without a pidfd (Linux
// before 5.3) the pid is signalled only while it is still bwrap's child,
// whose pid cannot have been reused.
func (h *nsHandle) kill(bwrap int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		_ = unix.PidfdSendSignal(h.fd, unix.SIGKILL, nil, 0)
		return
	}
	if bwrap > 0 && parentOf(h.pid) == bwrap {
		_ = syscall.Kill(h.pid, syscall.SIGKILL)
	}
}

// parentOf is pid's parent from /proc, 0 when it cannot be read.
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// wait returns once the init has exited, at most d. Only the caller of
// close may call it (it polls without the lock close takes).
func (h *nsHandle) wait(d time.Duration) {
	h.mu.Lock()
	fd := h.fd
	h.mu.Unlock()
	if fd < 0 {
		waitGone(h.pid, d)
		return
	}
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

func (h *nsHandle) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		_ = unix.Close(h.fd)
		h.fd = -1
	}
}
