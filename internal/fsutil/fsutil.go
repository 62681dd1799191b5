package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Errors of the confined operations, for errors.Is.
var (
	// ErrSymlink means a component of the path is a symbolic link (or the
	// target itself is one where a file was expected): the write is refused
	// because the link could lead anywhere.
	ErrSymlink = errors.New("a path component is a symbolic link")
	// ErrOutside means the path is not beneath the root it must stay in.
	ErrOutside = errors.New("path is outside its root")
	// ErrTooLarge means a file is larger than the caller's bound.
	ErrTooLarge = errors.New("file is too large")
	// ErrNotEmpty means a directory to remove still holds entries.
	ErrNotEmpty = errors.New("directory not empty")
)

// Stale temporary files: a leftover whose writer is dead is removed at
// once; one whose PID is alive (possibly a reused PID) only after
// staleTempAge, long past any real write; a legacy name without a PID
// after staleLegacyAge.
const (
	staleTempAge   = time.Hour
	staleLegacyAge = time.Minute
)

// WriteFileAtomic replaces path with data atomically. It is WriteFileIn
// with the file's own directory as the root: the final component is
// replaced, never followed, and the directory is opened as given.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	return WriteFileIn(filepath.Dir(path), path, data, perm)
}

// WriteFileIn replaces path (absolute, beneath root) with data: the data
// goes to a temporary file in the same directory (same file system, so the
// rename is atomic), is given perm and synced, then renamed over path, and
// the directory is synced so that the rename itself is durable. The
// directory is opened relative to root without following symbolic links,
// so the write cannot be redirected; a symlink at path itself is replaced,
// not followed. On failure the temporary file is removed and path is
// untouched. The directory must exist. Stale temporary files of earlier,
// killed writers in that directory are removed first.
func WriteFileIn(root, path string, data []byte, perm fs.FileMode) error {
	rel, err := relBeneath(root, path)
	if err != nil {
		return err
	}
	if rel == "." {
		return &fs.PathError{Op: "write", Path: path, Err: errors.New("is the root directory")}
	}
	if err := writeFileIn(root, rel, data, perm); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: unwrapPath(err)}
	}
	return nil
}

// SymlinkIn makes path (absolute, beneath root) a symbolic link to
// target, replacing what is there (a file, another link; not a
// directory) without following it: the link is made under a temporary
// name in the same directory and renamed over path. The directory is
// reached without following symbolic links. The target is not checked:
// a link is only followed by whoever opens it later.
func SymlinkIn(root, path, target string) error {
	rel, err := relBeneath(root, path)
	if err != nil {
		return err
	}
	if rel == "." {
		return &fs.PathError{Op: "symlink", Path: path, Err: errors.New("is the root directory")}
	}
	if err := symlinkIn(root, rel, target); err != nil {
		return &fs.PathError{Op: "symlink", Path: path, Err: unwrapPath(err)}
	}
	return nil
}

// ReadlinkIn is the target of the symbolic link path (absolute, beneath
// root), whose directory is reached without following symbolic links.
func ReadlinkIn(root, path string) (string, error) {
	rel, err := relBeneath(root, path)
	if err != nil {
		return "", err
	}
	target, err := readlinkIn(root, rel)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: path, Err: unwrapPath(err)}
	}
	return target, nil
}

// MkdirAllIn creates dir (absolute, beneath root) and its missing parents
// with perm, without following a symbolic link in any component.
func MkdirAllIn(root, dir string, perm fs.FileMode) error {
	rel, err := relBeneath(root, dir)
	if err != nil {
		return err
	}
	if err := mkdirAllIn(root, rel, perm); err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: unwrapPath(err)}
	}
	return nil
}

// RemoveIn removes the file path (absolute, beneath root); the directory
// holding it is reached without following symbolic links, and a symlink at
// path is removed itself, never its target.
func RemoveIn(root, path string) error {
	rel, err := relBeneath(root, path)
	if err != nil {
		return err
	}
	if err := removeIn(root, rel); err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: unwrapPath(err)}
	}
	return nil
}

// RemoveDirIn removes the empty directory dir (absolute, beneath root);
// its parent is reached without following symbolic links, and a symlink
// at dir is refused rather than followed. A directory that is not empty
// yields an error for which errors.Is(err, ErrNotEmpty) holds.
func RemoveDirIn(root, dir string) error {
	rel, err := relBeneath(root, dir)
	if err != nil {
		return err
	}
	if rel == "." {
		return &fs.PathError{Op: "rmdir", Path: dir, Err: errors.New("is the root directory")}
	}
	if err := removeDirIn(root, rel); err != nil {
		return &fs.PathError{Op: "rmdir", Path: dir, Err: unwrapPath(err)}
	}
	return nil
}

// LstatIn describes path (absolute, beneath root) without following a
// symbolic link in any component; a symlink at path is described itself.
// A symlink in a parent component yields ErrSymlink.
func LstatIn(root, path string) (fs.FileInfo, error) {
	rel, err := relBeneath(root, path)
	if err != nil {
		return nil, err
	}
	fi, err := lstatIn(root, rel)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: path, Err: unwrapPath(err)}
	}
	return fi, nil
}

// ReadFileIn reads the regular file path (absolute, beneath root) without
// following a symbolic link in any component. A file larger than max bytes
// (max > 0) yields ErrTooLarge, and its FileInfo, without being read.
func ReadFileIn(root, path string, max int64) ([]byte, fs.FileInfo, error) {
	rel, err := relBeneath(root, path)
	if err != nil {
		return nil, nil, err
	}
	data, fi, err := readFileIn(root, rel, max)
	if err != nil {
		// fi is kept when known: it gives the size of a file too large.
		return nil, fi, &fs.PathError{Op: "read", Path: path, Err: unwrapPath(err)}
	}
	return data, fi, nil
}

// RootOf returns the longest of roots that contains path, or "/" when none
// does: beneath "/" the whole path is still walked without following
// links, which is right for a path that was already resolved.
func RootOf(path string, roots ...string) string {
	best := ""
	for _, r := range roots {
		if r == "" {
			continue
		}
		if _, err := relBeneath(r, path); err == nil && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return string(filepath.Separator)
	}
	return best
}

// relBeneath returns path relative to root, refusing paths that are not
// beneath it. Both must be absolute.
func relBeneath(root, path string) (string, error) {
	if !filepath.IsAbs(root) || !filepath.IsAbs(path) {
		return "", fmt.Errorf("fsutil: %s (root %s): %w", path, root, errors.New("paths must be absolute"))
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("fsutil: %s: %w %s", path, ErrOutside, root)
	}
	return rel, nil
}

// unwrapPath drops a nested *fs.PathError so the caller's path is the one
// reported.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tempName is the name of a temporary file for base: recognisable as
// Odin's, carrying the writer's PID so a leftover of a dead writer can be
// told from one being written now.
func tempName(base string, rnd uint32) string {
	if len(base) > 180 { // stay under NAME_MAX with the suffix
		base = base[:180]
	}
	return fmt.Sprintf(".%s.odin-%d-%08x.tmp", base, os.Getpid(), rnd)
}

// staleTemp reports whether name is an Odin temporary file that no live
// writer owns: its writer's process is gone, or it is older than
// staleTempAge (the PID may have been reused). Names without a PID come
// from older versions of Odin and are stale after staleLegacyAge.
func staleTemp(name string, mod, now time.Time, alive func(pid int) bool) bool {
	if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") {
		return false
	}
	i := strings.LastIndex(name, ".odin-")
	if i < 0 {
		return false
	}
	tag := strings.TrimSuffix(name[i+len(".odin-"):], ".tmp")
	pidText, _, hasPID := strings.Cut(tag, "-")
	if !hasPID {
		if _, err := strconv.ParseUint(tag, 10, 64); err != nil {
			return false
		}
		return now.Sub(mod) > staleLegacyAge
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() || alive(pid) {
		return now.Sub(mod) > staleTempAge
	}
	return true
}

// ModeOr returns the permission bits of path if it exists, else def: a
// rewrite keeps a file's mode.
func ModeOr(path string, def fs.FileMode) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return def
}

// PrivateDir creates dir (and its parents) if missing and makes it
// accessible to its owner only: Odin's state directory holds transcripts,
// logs and history that other local users must not read. An existing
// directory is tightened too, since older versions created it 0755.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}
