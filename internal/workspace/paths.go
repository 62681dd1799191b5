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
func ResolveFrom(dir, p string) (string, error) { return ResolveVisiting(dir, p, nil) }

// ResolveVisiting is ResolveFrom that also calls visit with every path it
// steps through (the start, each component, each symlink's target on the
// way) before looking at it, and fails with visit's error: a caller can
// refuse paths that mean something else to another process (/proc/self)
// however they are reached. visit may be nil.
func ResolveVisiting(dir, p string, visit func(step string) error) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	links := 0
	w := walker{visit: visit, links: &links}
	if filepath.IsAbs(p) {
		return w.walk(string(filepath.Separator), p)
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("relative path %q without an absolute base", p)
	}
	return w.walk(dir, p)
}

// walker carries one resolution's symlink count and visitor.
type walker struct {
	visit func(string) error
	links *int
}

// walk resolves p component by component from the resolved directory
// cur. It does not clean p first: "link/.." must follow link before "..".
func (w walker) walk(cur, p string) (string, error) {
	links := w.links
	if err := w.step(cur); err != nil {
		return "", err
	}
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
		if err := w.step(next); err != nil {
			return "", err
		}
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
		if cur, err = w.walk(start, target); err != nil {
			return "", err
		}
	}
	return cur, nil
}

func (w walker) step(path string) error {
	if w.visit == nil {
		return nil
	}
	return w.visit(path)
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

// GitRoot returns the nearest ancestor of dir (or dir) that holds a real
// git repository, and false if there is none. A .git directory counts when
// it holds HEAD; a .git file counts only when it is a "gitdir: PATH"
// pointer to such a directory (a worktree or submodule), so an empty .git
// planted in a parent directory does not make that directory the root. The
// search never looks at stop or above it when dir lies below stop (pass
// the user's home directory: a repository above the user's projects is not
// theirs); "" searches to the file system root.
func GitRoot(dir, stop string) (string, bool) {
	below := stop != "" && dir != stop && Within(stop, dir)
	for cur := dir; ; {
		if below && cur == stop {
			return "", false
		}
		if isGitDir(filepath.Join(cur, ".git"), cur) {
			return cur, true
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", false
		}
		cur = parent
	}
}

// isGitDir reports whether dotGit (the .git entry of dir) is a git
// directory or a valid gitdir pointer to one.
func isGitDir(dotGit, dir string) bool {
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return false
	}
	hasHead := func(d string) bool {
		st, err := os.Stat(filepath.Join(d, "HEAD"))
		return err == nil && st.Mode().IsRegular()
	}
	if fi.IsDir() {
		return hasHead(dotGit)
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return false
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	st, err := os.Stat(target)
	return err == nil && st.IsDir() && hasHead(target)
}
