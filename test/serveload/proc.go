package serveload

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on
// every Linux architecture Go supports (the kernel scales to it whatever
// its own HZ).
const userHZ = 100

// procCPU is the user+system CPU process pid has used, from
// /proc/PID/stat; 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: fields are counted
	// after its closing parenthesis, from field 3 (state).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	return time.Duration(utime+stime) * time.Second / userHZ
}

// procStatus is the size in bytes of a kB field of /proc/PID/status
// (VmHWM, VmRSS); 0 when it cannot be read.
func procStatus(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb << 10
	}
	return 0
}

// countFDs counts process pid's open file descriptors; 0 when it cannot.
func countFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(ents)
}

// modelConns counts process pid's established TCP connections to the
// model server's port: the sockets among its descriptors whose remote end
// is that port in /proc/PID/net/tcp.
func (r *runner) modelConns(pid int) int {
	inodes := map[string]bool{}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	port, err := strconv.Atoi(r.mport)
	if err != nil {
		return 0
	}
	want := fmt.Sprintf(":%04X", port)
	n := 0
	for _, table := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// sl local rem st ... inode (field 10)
			if len(f) < 10 || f[3] != "01" || !strings.HasSuffix(f[2], want) {
				continue
			}
			if inodes[f[9]] {
				n++
			}
		}
	}
	return n
}
