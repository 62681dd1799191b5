package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data: the data goes to a temporary file
// in the same directory (same file system, so the rename is atomic), is
// given perm and synced, then renamed over path, and the directory is
// synced so that the rename itself is durable. On failure the temporary
// file is removed and path is untouched. The directory must exist.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".odin-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	// CreateTemp makes 0600 files; set the intended mode explicitly, and so
	// independently of the umask, as an in-place rewrite would keep it.
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Some file systems refuse to sync a directory; the data is already
	// safe, so that is not an error.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ModeOr returns the permission bits of path if it exists, else def: a
// rewrite keeps a file's mode.
func ModeOr(path string, def fs.FileMode) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return def
}
