//go:build !linux

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
	"syscall"
	"time"
)

// Outside Linux the confinement is os.Root's: a path cannot leave the root,
// though a symlink that stays inside it is followed.

func withRoot[T any](root string, fn func(r *os.Root) (T, error)) (T, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		var zero T
		return zero, err
	}
	defer r.Close()
	return fn(r)
}

func writeFileIn(root, rel string, data []byte, perm fs.FileMode) error {
	_, err := withRoot(root, func(r *os.Root) (struct{}, error) {
		dir, base := filepath.Split(rel)
		cleanStale(r, filepath.Clean(dir), time.Now())
		name := filepath.Join(dir, tempName(base, rand.Uint32()))
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return struct{}{}, err
		}
		ok := false
		defer func() {
			if !ok {
				f.Close()
				r.Remove(name)
			}
		}()
		if _, err := f.Write(data); err != nil {
			return struct{}{}, err
		}
		if err := f.Chmod(perm); err != nil {
			return struct{}{}, err
		}
		if err := f.Sync(); err != nil {
			return struct{}{}, err
		}
		if err := f.Close(); err != nil {
			return struct{}{}, err
		}
		if err := r.Rename(name, rel); err != nil {
			return struct{}{}, err
		}
		ok = true
		return struct{}{}, nil
	})
	return err
}

func symlinkIn(root, rel, target string) error {
	_, err := withRoot(root, func(r *os.Root) (struct{}, error) {
		dir, base := filepath.Split(rel)
		name := filepath.Join(dir, tempName(base, rand.Uint32()))
		if err := r.Symlink(target, name); err != nil {
			return struct{}{}, err
		}
		if err := r.Rename(name, rel); err != nil {
			r.Remove(name)
			return struct{}{}, err
		}
		return struct{}{}, nil
	})
	return err
}

func readlinkIn(root, rel string) (string, error) {
	return withRoot(root, func(r *os.Root) (string, error) { return r.Readlink(rel) })
}

func mkdirAllIn(root, rel string, perm fs.FileMode) error {
	_, err := withRoot(root, func(r *os.Root) (struct{}, error) { return struct{}{}, r.MkdirAll(rel, perm) })
	return err
}

func removeIn(root, rel string) error {
	_, err := withRoot(root, func(r *os.Root) (struct{}, error) { return struct{}{}, r.Remove(rel) })
	return err
}

func removeDirIn(root, rel string) error {
	_, err := withRoot(root, func(r *os.Root) (struct{}, error) {
		fi, err := r.Lstat(rel)
		if err != nil {
			return struct{}{}, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return struct{}{}, ErrSymlink
		}
		if !fi.IsDir() {
			return struct{}{}, syscall.ENOTDIR
		}
		err = r.Remove(rel)
		if err != nil {
			if f, oerr := r.Open(rel); oerr == nil {
				names, _ := f.Readdirnames(1)
				f.Close()
				if len(names) > 0 {
					return struct{}{}, ErrNotEmpty
				}
			}
		}
		return struct{}{}, err
	})
	return err
}

func lstatIn(root, rel string) (fs.FileInfo, error) {
	return withRoot(root, func(r *os.Root) (fs.FileInfo, error) { return r.Lstat(rel) })
}

func readFileIn(root, rel string, max int64) ([]byte, fs.FileInfo, error) {
	var fi fs.FileInfo
	data, err := withRoot(root, func(r *os.Root) ([]byte, error) {
		f, err := r.Open(rel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, errors.New("not a regular file")
		}
		if max > 0 && fi.Size() > max {
			return nil, ErrTooLarge
		}
		rd := io.Reader(f)
		if max > 0 {
			rd = io.LimitReader(f, max+1)
		}
		data, err := io.ReadAll(rd)
		if err == nil && max > 0 && int64(len(data)) > max {
			err = ErrTooLarge
		}
		return data, err
	})
	return data, fi, err
}

func cleanStale(r *os.Root, dir string, now time.Time) {
	d, err := r.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.Contains(n, ".odin-") {
			continue
		}
		if info, err := e.Info(); err == nil && staleTemp(n, info.ModTime(), now, pidAlive) {
			r.Remove(filepath.Join(dir, n))
		}
	}
}

// pidAlive cannot ask the system portably; a temporary file is then stale
// only by age.
func pidAlive(int) bool { return true }

// CleanStaleTemps removes Odin's stale temporary files from the directory
// dir beneath root.
func CleanStaleTemps(root, dir string) error {
	rel, err := relBeneath(root, dir)
	if err != nil {
		return err
	}
	_, err = withRoot(root, func(r *os.Root) (struct{}, error) {
		cleanStale(r, rel, time.Now())
		return struct{}{}, nil
	})
	return err
}

// LockDirIn has no cross-process lock outside Linux; writes are still
// serialized within the process by the tools' path locks.
func LockDirIn(ctx context.Context, root, dir string) (unlock func(), err error) {
	if _, err := relBeneath(root, dir); err != nil {
		return nil, err
	}
	return func() {}, ctx.Err()
}
