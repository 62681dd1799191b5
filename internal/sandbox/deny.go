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
// hidden, and neither readable nor writable. A denied path that holds the
// project root (or another writable directory, or the build cache) is left
// alone: hiding it would hide the project.
func (l *Launcher) denyArgs() []string {
	found := l.opts.DenyRead.Existing()
	keep := l.writableDirs()
	if c := l.cacheDir(); c != "" {
		keep = append(keep, c)
	}
	var args []string
	var hidden []string
	for _, p := range found.Paths { // sorted: a directory comes before what is in it
		if slices.ContainsFunc(keep, func(k string) bool { return within(p, k) }) {
			continue
		}
		if slices.ContainsFunc(hidden, func(h string) bool { return within(h, p) }) {
			continue // hidden with its directory
		}
		hidden = append(hidden, p)
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
	// Enforced says whether commands find them hidden: only under
	// bubblewrap. Landlock can only grant access beneath a directory,
	// never take it away beneath a grant, so the fallback does not hide
	// them (nor does running unconfined).
	Enforced bool
}

// DescribeDenyRead reports the read deny list and whether commands see it.
func (l *Launcher) DescribeDenyRead() Hidden {
	l = l.get()
	found := l.opts.DenyRead.Existing()
	return Hidden{Rules: l.opts.DenyRead.List(), Dropped: l.opts.DenyRead.Dropped(), Paths: found.Paths,
		Incomplete: found.Incomplete, Enforced: l.Status().Kind == KindBubblewrap}
}
