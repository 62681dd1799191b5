package fsutil

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// resolveFlags keep a walk beneath its directory and off every symbolic
// (and /proc magic) link.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openRoot opens the root itself; it was chosen (and resolved) by the
// caller, so it is opened as given.
func openRoot(root string) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return fd, nil
}

// openBeneath opens rel (a directory when dir) beneath dirfd with flags,
// following no symbolic link. It uses openat2 and, on kernels without it,
// walks the components with O_NOFOLLOW.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveFlags}
	for {
		fd, err := unix.Openat2(dirfd, rel, how)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ENOSYS, unix.EPERM:
			// No openat2 (old kernel, or a seccomp filter refusing it).
			return walkBeneath(dirfd, rel, flags)
		}
		return -1, mapErr(err)
	}
}

// walkBeneath is openBeneath one component at a time.
func walkBeneath(dirfd int, rel string, flags int) (int, error) {
	comps := components(rel)
	cur, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	for i, c := range comps {
		if c == ".." {
			unix.Close(cur)
			return -1, ErrOutside
		}
		fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(comps)-1 {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		next, err := unix.Openat(cur, c, fl, 0)
		unix.Close(cur)
		if err != nil {
			return -1, mapErr(err)
		}
		cur = next
	}
	return cur, nil
}

func components(rel string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// mapErr turns the kernel's answers to a blocked resolution into the
// package's errors.
func mapErr(err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return ErrSymlink
	case errors.Is(err, unix.EXDEV):
		return ErrOutside
	}
	return err
}

// openDirIn opens directory rel beneath root.
func openDirIn(root, rel string) (int, error) {
	rfd, err := openRoot(root)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	if rel == "." || rel == "" {
		return unix.Dup(rfd)
	}
	fd, err := openBeneath(rfd, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOTDIR) {
		// A component that is not a directory may be a symlink that
		// O_NOFOLLOW|O_DIRECTORY reports as ENOTDIR.
		return -1, notDirOrLink(rfd, rel)
	}
	return fd, err
}

// notDirOrLink finds the first component of rel that is a symlink (then
// ErrSymlink) and otherwise reports ENOTDIR.
func notDirOrLink(rfd int, rel string) error {
	comps := components(rel)
	for i := range comps {
		var st unix.Stat_t
		if err := unix.Fstatat(rfd, filepath.Join(comps[:i+1]...), &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return ErrSymlink
		}
	}
	return unix.ENOTDIR
}

func writeFileIn(root, rel string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	cleanStaleAt(dfd, time.Now())
	name := tempName(base, rand.Uint32())
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer func() {
		if err != nil {
			f.Close()
			// Best effort: the write already failed with err, which is
			// what the caller needs; a temp file left behind is swept
			// as stale later.
			_ = unix.Unlinkat(dfd, name, 0)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// The temporary file is 0600; set the intended mode explicitly, and so
	// independently of the umask, as an in-place rewrite would keep it.
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = unix.Renameat(dfd, name, dfd, base); err != nil {
		return err
	}
	// Some file systems refuse to sync a directory; the data is already
	// safe, so that is not an error.
	_ = unix.Fsync(dfd)
	return nil
}

func symlinkIn(root, rel, target string) error {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	// Made under a temporary name and renamed over base: whatever is at
	// base (a file, another link) is replaced, never followed.
	name := tempName(base, rand.Uint32())
	if err := unix.Symlinkat(target, dfd, name); err != nil {
		return err
	}
	if err := unix.Renameat(dfd, name, dfd, base); err != nil {
		_ = unix.Unlinkat(dfd, name, 0)
		return err
	}
	_ = unix.Fsync(dfd)
	return nil
}

func readlinkIn(root, rel string) (string, error) {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dfd, base, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

func mkdirAllIn(root, rel string, perm fs.FileMode) error {
	cur, err := openRoot(root)
	if err != nil {
		return err
	}
	for _, c := range components(rel) {
		if c == ".." {
			unix.Close(cur)
			return ErrOutside
		}
		if err := unix.Mkdirat(cur, c, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
			unix.Close(cur)
			return err
		}
		next, err := unix.Openat(cur, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOTDIR || err == unix.ELOOP {
			var st unix.Stat_t
			if unix.Fstatat(cur, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = ErrSymlink
			}
		}
		unix.Close(cur)
		if err != nil {
			return mapErr(err)
		}
		cur = next
	}
	unix.Close(cur)
	return nil
}

func removeIn(root, rel string) error {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return unix.Unlinkat(dfd, base, 0)
}

func removeDirIn(root, rel string) error {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	err = unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		return ErrNotEmpty
	}
	return err
}

func lstatIn(root, rel string) (fs.FileInfo, error) {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), base)
	defer f.Close()
	return f.Stat()
}

func readFileIn(root, rel string, max int64) ([]byte, fs.FileInfo, error) {
	dir, base := filepath.Split(rel)
	dfd, err := openDirIn(root, filepath.Clean(dir))
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	f := os.NewFile(uintptr(fd), base)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, errors.New("not a regular file")
	}
	if max > 0 && fi.Size() > max {
		return nil, fi, ErrTooLarge
	}
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fi, ErrTooLarge
	}
	return data, fi, nil
}

// cleanStaleAt removes Odin's stale temporary files from the directory
// dfd. It is best effort: a failure leaves a file for the next time.
func cleanStaleAt(dfd int, now time.Time) {
	names, err := dirNames(dfd)
	if err != nil {
		return
	}
	for _, n := range names {
		if !strings.Contains(n, ".odin-") || !strings.HasSuffix(n, ".tmp") {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(dfd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if staleTemp(n, time.Unix(st.Mtim.Unix()), now, pidAlive) {
			_ = unix.Unlinkat(dfd, n, 0) // a sweep: one that fails is retried next time
		}
	}
}

func dirNames(dfd int) ([]string, error) {
	fd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}

// pidAlive reports whether a process with this PID exists (EPERM: it
// exists but belongs to someone else).
func pidAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

// CleanStaleTemps removes Odin's stale temporary files (see staleTemp)
// from the directory dir beneath root, without following symbolic links.
func CleanStaleTemps(root, dir string) error {
	rel, err := relBeneath(root, dir)
	if err != nil {
		return err
	}
	dfd, err := openDirIn(root, rel)
	if err != nil {
		return &fs.PathError{Op: "clean", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	cleanStaleAt(dfd, time.Now())
	return nil
}

// LockDirIn takes an exclusive advisory lock (flock) on the directory dir
// beneath root and returns its release. Every Odin process writing a file
// in dir holds it from its freshness check to its rename, which makes that
// check a compare-and-swap across processes (a rename replaces the file's
// inode, so the file itself cannot carry the lock). It waits until the
// lock is free or ctx is done.
func LockDirIn(ctx context.Context, root, dir string) (unlock func(), err error) {
	rel, err := relBeneath(root, dir)
	if err != nil {
		return nil, err
	}
	dfd, err := openDirIn(root, rel)
	if err != nil {
		return nil, &fs.PathError{Op: "lock", Path: dir, Err: err}
	}
	delay := time.Millisecond
	for {
		err := unix.Flock(dfd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { unix.Close(dfd) }, nil // closing releases the lock
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			unix.Close(dfd)
			return nil, &fs.PathError{Op: "lock", Path: dir, Err: err}
		}
		select {
		case <-ctx.Done():
			unix.Close(dfd)
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}
