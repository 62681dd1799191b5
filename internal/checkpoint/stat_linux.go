//go:build linux

package checkpoint

import (
	"io/fs"
	"os"
	"syscall"
	"time"
)

// fileStat is what a scan compares to tell whether a file may have
// changed without reading it.
type fileStat struct {
	size         int64
	mtime, ctime int64
	ino, dev     uint64
	perm         fs.FileMode
	// link is set for a symbolic link (its target is the content).
	link bool
}

func statOf(fi fs.FileInfo) fileStat {
	st := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), perm: fi.Mode().Perm(), link: fi.Mode()&fs.ModeSymlink != 0}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ctime = time.Unix(s.Ctim.Sec, s.Ctim.Nsec).UnixNano()
		st.ino, st.dev = s.Ino, s.Dev
	}
	return st
}

func (s fileStat) same(o fileStat) bool { return s == o }

// racy reports whether the file changed so close to the scan started at
// start that a later change in the same timestamp tick could leave its
// stat as it is.
func (s fileStat) racy(start time.Time) bool {
	return s.mtime >= start.Add(-racyWindow).UnixNano() || s.ctime >= start.Add(-racyWindow).UnixNano()
}

// openNoFollow opens a file for reading without following a symbolic
// link at its last component, and without blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
