package tool

import "context"

// WorkDirer is implemented by a tool that keeps a working directory of its
// own across calls (ShellSession): its commands run there, not in the
// project root, so they must be checked there too.
type WorkDirer interface {
	// WorkDir returns the directory env's next command will run in, ""
	// when it is the project root (no session yet).
	WorkDir(env *Env) string
}

type workDirKey struct{}

// WithWorkDir returns ctx carrying dir, the directory the command of the
// call being authorised runs in. The permission decorator sets it from the
// tool's WorkDirer, before the policy checks the command.
func WithWorkDir(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, workDirKey{}, dir)
}

// WorkDir returns the directory WithWorkDir put in ctx, "" for none (the
// project root).
func WorkDir(ctx context.Context) string {
	d, _ := ctx.Value(workDirKey{}).(string)
	return d
}
