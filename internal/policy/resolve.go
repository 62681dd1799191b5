package policy

import "github.com/odin-code/odin/internal/workspace"

// resolvePath returns the path the kernel would reach for p from the
// resolved directory base (workspace.ResolveFrom: symlinks are followed
// before a later "..").
func resolvePath(base, p string) (string, error) {
	return workspace.ResolveFrom(base, p)
}
