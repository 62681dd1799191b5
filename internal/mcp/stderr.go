package mcp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Bounds of a server's stderr log: the tail kept in memory (odin mcp list,
// start-failure reports) and the size of the log file before it rotates
// to NAME.log.1 (one old file is kept).
const (
	stderrTail    = 16 << 10
	stderrFileMax = 1 << 20
)

// stderrLog keeps what a stdio server writes to stderr: its last
// stderrTail bytes in memory and, when path is set, everything in a log
// file that rotates at stderrFileMax. Write never fails and never blocks
// on anything but the disk, so a chatty server is never stalled by Odin.
// Safe for concurrent use (one process writes, Status reads).
type stderrLog struct {
	path string

	mu   sync.Mutex
	tail []byte
	f    *os.File
	size int64
}

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tail = append(l.tail, p...)
	if over := len(l.tail) - stderrTail; over > 0 {
		cut := over
		// Keep whole lines where one ends soon after the cut.
		if i := bytes.IndexByte(l.tail[over:], '\n'); i >= 0 && i < 256 {
			cut = over + i + 1
		}
		l.tail = append(l.tail[:0], l.tail[cut:]...)
	}
	l.toFile(p)
	return len(p), nil
}

// toFile appends p to the log file, rotating it first when full. Errors
// (a read-only state dir) leave the file out; the tail still works.
func (l *stderrLog) toFile(p []byte) {
	if l.path == "" {
		return
	}
	if l.f != nil && l.size+int64(len(p)) > stderrFileMax {
		_ = l.f.Close()
		l.f = nil
		_ = os.Rename(l.path, l.path+".1")
	}
	if l.f == nil {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return
		}
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		info, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return
		}
		l.f, l.size = f, info.Size()
	}
	n, _ := l.f.Write(p)
	l.size += int64(n)
}

// lines returns the last n non-empty lines of the tail, unsanitised: the
// caller passes them through termsafe before a terminal sees them.
func (l *stderrLog) lines(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range strings.Split(string(l.tail), "\n") {
		if s = strings.TrimRight(s, "\r"); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func (l *stderrLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}
