package policy

import (
	"fmt"
	"strings"

	"github.com/odin-code/odin/internal/policy/shell"
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

// resolveShell resolves p from base like resolvePath, for a path a shell
// command will open, and fails with a *processRelativeError when any step
// (the path as written or a symlink on the way) enters /proc/self,
// /proc/thread-self, /proc/<pid> or /dev/fd: those resolve against the
// process that opens them, so Odin cannot know where they lead for the
// shell. The exact device names safe in any mode (devPath) are handled by
// the callers before.
func resolveShell(base, p string) (string, error) {
	return workspace.ResolveVisiting(base, p, func(step string) error {
		if processRelative(step) {
			return &processRelativeError{path: p, via: step}
		}
		return nil
	})
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
	return first == "self" || first == "thread-self" || shell.IsNumber(first)
}
