package sandbox

import (
	"os"
	"slices"

	"github.com/odin-code/odin/internal/readdeny"
)

// denyArgs are the bubblewrap arguments that hide the read deny list from
// the command: an empty read-only tmpfs over each denied directory and
// /dev/null over each denied file, for the denied paths present now (see
// readdeny.Rules.Existing for what finding them costs). They come after
// every other bind, so a denied file inside the writable project stays
// hidden, and neither readable nor writable.
func (l *Launcher) denyArgs() []string {
	var args []string
	for _, p := range l.hiddenPaths() {
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone since it was found: nothing to hide
		}
		if fi.IsDir() {
			args = append(args, "--tmpfs", p, "--remount-ro", p)
		} else {
			args = append(args, "--ro-bind", os.DevNull, p)
		}
	}
	return args
}

// landlockReadGrants are the paths beneath which a Landlock-confined
// command may read files: everything but landlockHidden, through
// grantBeneath (Landlock grants, it cannot deny beneath a grant), and the
// device files of devReadable. The init computes them (readGrants) from
// the rules' Hide and Read, so that a plan does not list the host's root
// directory.
//
// A denied file inside the project (PROJECT/.env, svc/.env.production, a
// key) is hidden the same way: the directories on the way to it get no
// rule of their own, their entries do. A file created in such a directory
// during the command would then have no rule that lets it be read back,
// so the write grants are split around the denied paths as well
// (planInit): nothing new can be made directly beside a denied
// file — as nothing can beside .git at the root of every repository
// already — while every existing entry stays readable and writable, and
// the denied file is neither (as under bubblewrap). Directories stay
// listable: only file contents are denied.
func (l *Launcher) landlockReadGrants() []string {
	return readGrants(l.landlockHidden(), devReadable)
}

// landlockHidden are the paths whose files a Landlock-confined command
// may not read: the read deny list and /dev but for devReadable.
// bubblewrap's minimal /dev has no terminal; without it, the user's
// terminals (/dev/pts/N, where Odin and the user's shells run, /dev/tty,
// the consoles) are files the user owns, and a command that opened one
// for reading would take the keys typed there.
func (l *Launcher) landlockHidden() []string {
	return append(l.hiddenPaths(), "/dev")
}

// devReadable are the files of /dev a Landlock-confined command may read,
// those bubblewrap's /dev has besides its terminals (/dev/fd and
// /dev/std* lead through /proc/self/fd to the descriptor's own file or
// pipe, which is what Landlock checks, even where /proc/PID is closed).
var devReadable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm"}

// readGrants are the paths beneath which reading files is granted when
// hide is kept unreadable: everything else, and extra.
func readGrants(hide, extra []string) []string {
	if len(hide) == 0 {
		return extra
	}
	return append(grantBeneath("/", hide), extra...)
}

// hiddenPaths are the denied paths present now that the sandbox hides,
// none beneath another. A denied path that holds the project root (or
// another writable directory, or the build cache) is left out — hiding it
// would hide the project — while what is denied inside it on its own is
// kept.
func (l *Launcher) hiddenPaths() []string {
	found := l.opts.DenyRead.Existing()
	if len(found.Paths) == 0 {
		return nil
	}
	writable := l.writableDirs()
	keep := writable
	if c := l.cacheDir(); c != "" {
		keep = append(slices.Clone(keep), c)
	}
	var hidden []string
	for _, p := range found.Paths { // sorted: a directory comes before what is in it
		if slices.ContainsFunc(keep, func(k string) bool { return within(p, k) }) {
			continue
		}
		if slices.ContainsFunc(hidden, func(h string) bool { return within(h, p) }) {
			continue // hidden with its directory
		}
		hidden = append(hidden, p)
	}
	return hidden
}

// Hidden describes what the sandbox hides of the read deny list, for
// `odin doctor`.
type Hidden struct {
	// Rules are the patterns in force.
	Rules []readdeny.Rule
	// Dropped are the project's "!" patterns, which were ignored.
	Dropped []string
	// Paths are the denied paths present now.
	Paths []string
	// Incomplete: the project walk stopped at its bound.
	Incomplete bool
	// Enforced says whether commands find them hidden: under bubblewrap
	// and Landlock all of them (see landlockReadGrants for what that
	// costs under Landlock); unconfined none.
	Enforced bool
	// Kind is the sandbox that enforces them.
	Kind Kind
}

// DescribeDenyRead reports the read deny list and whether commands see it.
func (l *Launcher) DescribeDenyRead() Hidden {
	l = l.get()
	found := l.opts.DenyRead.Existing()
	return Hidden{Rules: l.opts.DenyRead.List(), Dropped: l.opts.DenyRead.Dropped(), Paths: found.Paths,
		Incomplete: found.Incomplete, Enforced: l.Status().Kind != KindNone, Kind: l.Status().Kind}
}
