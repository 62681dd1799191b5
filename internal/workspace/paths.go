package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve makes path absolute (relative paths are taken against base),
// cleans it and resolves every symlink in it. For a path that does not exist
// yet, the nearest existing ancestor is resolved and the remaining
// components are appended, so a file about to be created through a symlinked
// directory resolves to where it would really land.
func Resolve(base, path string) (string, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	path = filepath.Clean(path)
	var rest []string
	cur := path
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// A dangling symlink or a component that is not a directory.
			if target, lerr := os.Readlink(cur); lerr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(cur), target)
				}
				resolved, rerr := Resolve(base, target)
				if rerr != nil {
					return "", rerr
				}
				for i := len(rest) - 1; i >= 0; i-- {
					resolved = filepath.Join(resolved, rest[i])
				}
				return resolved, nil
			}
			return "", err
		}
		// cur does not exist: it may still be a dangling symlink.
		if target, lerr := os.Readlink(cur); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			resolved, rerr := Resolve(base, target)
			if rerr != nil {
				return "", rerr
			}
			for i := len(rest) - 1; i >= 0; i-- {
				resolved = filepath.Join(resolved, rest[i])
			}
			return resolved, nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
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
