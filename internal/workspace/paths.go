package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symlinks followed while resolving one path, as the
// kernel's ELOOP limit does.
const maxLinks = 255

// Resolve returns the absolute, symlink-free path the kernel would reach for
// p, taking a relative p against base (which need not be resolved). See
// ResolveFrom.
func Resolve(base, p string) (string, error) {
	if filepath.IsAbs(p) {
		return ResolveFrom(string(filepath.Separator), p)
	}
	dir, err := ResolveFrom(string(filepath.Separator), base)
	if err != nil {
		return "", err
	}
	return ResolveFrom(dir, p)
}

// ResolveFrom returns the absolute, symlink-free path the kernel would reach
// for p, taking a relative p against dir, which must already be resolved
// (absolute, clean, free of symlinks: the project root, a directory a
// command walker tracks). Unlike cleaning first and then evaluating
// symlinks, it follows each symlink before applying a later "..", so
// "link/../x" with link -> /etc means /x, exactly as the shell and the
// kernel read it. The part of p that does not exist yet (a file about to be
// created) is appended lexically to its nearest existing ancestor, so a file
// created through a symlinked directory resolves to where it would land.
func ResolveFrom(dir, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	links := 0
	if filepath.IsAbs(p) {
		return walkPath(string(filepath.Separator), p, &links)
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("relative path %q without an absolute base", p)
	}
	return walkPath(dir, p, &links)
}

// walkPath resolves p component by component from the resolved directory
// cur. It does not clean p first: "link/.." must follow link before "..".
func walkPath(cur, p string, links *int) (string, error) {
	comps := strings.Split(filepath.ToSlash(p), "/")
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Not there (yet): the rest cannot traverse a symlink, so
				// it is appended as written. A ".." in it would make the
				// kernel fail; cleaning it lexically keeps the result an
				// over-approximation of where the call could land.
				return filepath.Clean(filepath.Join(append([]string{next}, comps[i+1:]...)...)), nil
			}
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		if *links > maxLinks {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		start := cur
		if filepath.IsAbs(target) {
			start = string(filepath.Separator)
		}
		if cur, err = walkPath(start, target, links); err != nil {
			return "", err
		}
	}
	return cur, nil
}

// Within reports whether path lies inside dir or is dir itself. Both must be
// absolute and clean (as Resolve returns them). The test compares path
// components, so /work/proj_evil is not within /work/proj.
func Within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	if rel == "." {
		return true
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// GitRoot returns the nearest ancestor of dir (or dir) that holds a .git
// entry, and false if there is none.
func GitRoot(dir string) (string, bool) {
	for cur := dir; ; {
		if _, err := os.Lstat(filepath.Join(cur, ".git")); err == nil {
			return cur, true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		cur = parent
	}
}
