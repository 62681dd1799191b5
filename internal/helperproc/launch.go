package helperproc

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"

	"github.com/odin-code/odin/internal/sandbox"
)

// Launch builds a helper's command, confined and not started. release,
// when not nil, is called once after the command has been waited for.
type Launch func(ctx context.Context, argv []string) (cmd *exec.Cmd, release func(), err error)

// Sandboxed is a Launch through l (nil: Required()). spec is the rest of
// the helper's confinement (its Dir, default /; UnixSockets for
// Chromium); its Args
// become argv, the program is kept visible (bubblewrap's /tmp is private,
// and tests build helpers there), and it is Confined: where l has no
// working sandbox the helper is refused, not run plainly.
func Sandboxed(l *sandbox.Launcher, spec sandbox.Spec) Launch {
	return func(ctx context.Context, argv []string) (*exec.Cmd, func(), error) {
		launcher := l
		if launcher == nil {
			launcher = Required()
		}
		s := spec
		s.Args = slices.Clone(argv)
		s.Visible = append(slices.Clone(spec.Visible), programPaths(argv)...)
		s.Confined = true
		if s.Dir == "" {
			// A launcher without a root would start it in Odin's own
			// directory, which need not exist in the sandbox.
			s.Dir = "/"
		}
		p, err := launcher.Command(ctx, s)
		if err != nil {
			return nil, nil, err
		}
		return p.Cmd, p.Release, nil
	}
}

// Required is the launcher of helpers started without a Launch (tests,
// callers that have no session): bubblewrap, else Landlock, else a
// refusal that says why (permissions.sandbox: required).
var Required = sync.OnceValue(func() *sandbox.Launcher {
	return sandbox.New(sandbox.Options{Mode: sandbox.ModeRequired})
})

// programPaths are the helper program's absolute path and, if it is a
// link, its target: both must be visible for the sandbox to exec it.
func programPaths(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	abs, err := filepath.Abs(argv[0])
	if err != nil {
		return nil
	}
	out := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		out = append(out, real)
	}
	return out
}
