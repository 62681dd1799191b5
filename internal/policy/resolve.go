package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/odin-code/odin/internal/workspace"
)

// resolvePath returns the path the kernel would reach for p from the
// resolved directory base (workspace.ResolveFrom: symlinks are followed
// before a later "..").
func resolvePath(base, p string) (string, error) {
	return workspace.ResolveFrom(base, p)
}

// processRelativeError reports a path that means something else to the
// shell running a command than to Odin: /proc/self and /dev/fd name the
// process that opens them, so /proc/self/cwd is Odin's directory when Odin
// resolves it and the shell's (after its cd) when the shell opens it.
type processRelativeError struct {
	path string // as written
	via  string // the process-relative path it goes through
}

func (e *processRelativeError) Error() string {
	if e.via == e.path || strings.HasPrefix(e.path, e.via) {
		return fmt.Sprintf("%s names the opening process's own files (its working directory, descriptors or root), which the shell sees differently from Odin", e.path)
	}
	return fmt.Sprintf("%s goes through %s, which names the opening process's own files (its working directory, descriptors or root), which the shell sees differently from Odin", e.path, e.via)
}

// maxShellLinks bounds symlink expansion, as the kernel does (40).
const maxShellLinks = 40

// resolveShell resolves p from base like resolvePath, for a path a shell
// command will open, and fails with a *processRelativeError when any step
// (the path as written or a symlink on the way) enters /proc/self,
// /proc/thread-self, /proc/<pid> or /dev/fd: those resolve against the
// process that opens them, so Odin cannot know where they lead for the
// shell. The exact device names safe in any mode (devPath) are handled by
// the callers before.
func resolveShell(base, p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	links := 0
	start := base
	if filepath.IsAbs(p) {
		start = string(filepath.Separator)
	} else if !filepath.IsAbs(base) {
		return "", fmt.Errorf("relative path %q without an absolute base", p)
	}
	return walkShell(p, start, p, &links)
}

func walkShell(orig, cur, p string, links *int) (string, error) {
	if processRelative(cur) {
		return "", &processRelativeError{path: orig, via: cur}
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
		if processRelative(next) {
			return "", &processRelativeError{path: orig, via: next}
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Clean(filepath.Join(append([]string{next}, comps[i+1:]...)...)), nil
			}
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		if *links > maxShellLinks {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", orig)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", next, err)
		}
		from := cur
		if filepath.IsAbs(target) {
			from = string(filepath.Separator)
		}
		if cur, err = walkShell(orig, from, target, links); err != nil {
			return "", err
		}
	}
	return cur, nil
}

// processRelative reports whether p (absolute, clean) is or lies under a
// directory whose meaning depends on the process that opens it.
func processRelative(p string) bool {
	if p == "/dev/fd" || strings.HasPrefix(p, "/dev/fd/") {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return first == "self" || first == "thread-self" || isNumber(first)
}
