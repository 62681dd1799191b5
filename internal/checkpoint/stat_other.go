//go:build !linux

package checkpoint

import (
	"io/fs"
	"os"
	"time"
)

// fileStat is what a scan compares to tell whether a file may have
// changed without reading it; outside Linux the portable fields only.
type fileStat struct {
	size  int64
	mtime int64
	perm  fs.FileMode
	link  bool
}

func statOf(fi fs.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), perm: fi.Mode().Perm(), link: fi.Mode()&fs.ModeSymlink != 0}
}

func (s fileStat) same(o fileStat) bool { return s == o }

func (s fileStat) racy(start time.Time) bool {
	return s.mtime >= start.Add(-racyWindow).UnixNano()
}

// openNoFollow opens a regular file for reading; it refuses a path that
// is a symbolic link when opened.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return f, nil
}
