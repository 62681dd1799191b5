//go:build unix

package config

import (
	"os"
	"syscall"
)

// statIdentity is fi's inode and change time (ns): a file replaced by
// rename, or rewritten to the same size within the clock's resolution,
// still differs in one of them.
func statIdentity(fi os.FileInfo) (inode uint64, ctime int64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), ctimeOf(st)
}
