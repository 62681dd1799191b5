package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Blocked says how the sandbox keeps a process from a path, for telling a
// user why a program failed and what would let it through.
type Blocked struct {
	// Hidden is set when the path is not there at all inside the sandbox;
	// ReadOnly when it is there but cannot be written.
	Hidden, ReadOnly bool
	// Why says so in a few words ("the sandbox's /tmp is private").
	Why string
	// DenyRule is the read deny list's rule that hides the path, if that
	// is the reason.
	DenyRule string
}

// Explain reports whether, and why, a process launched with spec cannot
// reach path (absolute, as the host names it): hidden from reading, or,
// when write is set, read-only. ok is false when the sandbox does not
// stand in the way (no sandbox, or the path is reachable), so a failure
// on it has another cause.
func (l *Launcher) Explain(path string, write bool, spec Spec) (Blocked, bool) {
	l = l.get()
	st := l.Status()
	if st.Kind == KindNone || !filepath.IsAbs(path) {
		return Blocked{}, false
	}
	path = filepath.Clean(path)
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	if l.opts.DenyRead != nil {
		if rule, denied := l.opts.DenyRead.Match(path); denied {
			return Blocked{Hidden: true, Why: "the read deny list hides it", DenyRule: rule.String()}, true
		}
	}
	granted := resolveDirs(spec.Writable)
	under := func(dirs []string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return within(d, real) || within(d, path) })
	}
	if st.Kind == KindBubblewrap {
		shown := append(append(slices.Clone(granted), l.writableDirs()...), resolveDirs(spec.Visible)...)
		if within("/tmp", real) && !under(shown) {
			if _, err := os.Stat(path); err == nil || write {
				return Blocked{Hidden: true, Why: "the sandbox's /tmp is private"}, true
			}
		}
		for _, h := range runtimeDirs(l.runDirs(), l.opts.Environ()) {
			if within(h, real) && !under(shown) {
				return Blocked{Hidden: true, Why: fmt.Sprintf("the sandbox covers %s (runtime sockets)", h)}, true
			}
		}
	}
	if !write {
		return Blocked{}, false
	}
	writable := slices.Clone(granted)
	if spec.Write {
		writable = append(writable, l.writableDirs()...)
	}
	if c := l.cacheDir(); c != "" {
		writable = append(writable, c)
	}
	if st.Kind == KindBubblewrap {
		writable = append(writable, "/tmp")
	}
	if slices.Contains(devFiles, path) {
		return Blocked{}, false
	}
	if !under(writable) {
		return Blocked{ReadOnly: true, Why: "outside the directories it may write"}, true
	}
	for _, pp := range l.protectedPaths(append(l.writableDirs(), granted...)) {
		if within(pp, real) && !slices.ContainsFunc(granted, func(g string) bool { return within(pp, g) && within(g, real) }) {
			return Blocked{ReadOnly: true, Why: "Odin protects it (" + pp + ")"}, true
		}
	}
	return Blocked{}, false
}
