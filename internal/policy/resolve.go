package policy

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

// resolvePath returns the absolute, symlink-free path the kernel would reach
// for p, taking a relative p against base. Unlike cleaning first and then
// evaluating symlinks, it follows each symlink before applying a later "..",
// so "link/../x" with link -> /etc means /x, exactly as the shell and the
// kernel read it. The part of p that does not exist yet (a file about to be
// created) is appended lexically to its nearest existing ancestor.
func resolvePath(base, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsAbs(base) {
			return "", fmt.Errorf("relative path %q without an absolute base", p)
		}
		// Concatenate, do not Join: Join would clean "link/.." away before
		// the link is followed.
		p = base + string(filepath.Separator) + p
	}
	links := 0
	return walkPath(p, &links)
}

func walkPath(p string, links *int) (string, error) {
	comps := strings.Split(filepath.ToSlash(p), "/")
	cur := string(filepath.Separator)
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
		if !filepath.IsAbs(target) {
			target = cur + string(filepath.Separator) + target
		}
		if cur, err = walkPath(target, links); err != nil {
			return "", err
		}
	}
	return cur, nil
}
