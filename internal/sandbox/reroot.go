package sandbox

// WithRoot returns a Launcher like l whose root (writable in edit mode,
// with its .git, .odin and odin.yaml protected) is root instead: an
// isolated specialist's commands write its worktree, never the project.
// It shares l's probe, so it costs no new one; l itself is unchanged.
// A nil l, or root equal to l's, returns l.
func (l *Launcher) WithRoot(root string) *Launcher {
	if l == nil || root == "" || root == l.opts.Root {
		return l
	}
	l.Status() // probe once, then share the result
	c := &Launcher{opts: l.opts, status: l.status, abi: l.abi, exe: l.exe, bwrap: l.bwrap, bwrapSize: l.bwrapSize, noInit: l.noInit,
		homeModCache: l.homeModCache, homeGoCache: l.homeGoCache}
	c.opts.Root = root
	c.once.Do(func() {})
	return c
}
