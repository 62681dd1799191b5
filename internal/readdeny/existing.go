package readdeny

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/workspace"
)

// Bounds of the search for existing denied paths. The project walk runs
// before every sandboxed command; past maxTreeDirs directories it stops
// (Existing says so) rather than make every command slow.
const (
	maxTreeDirs   = 50_000
	maxGlobDepth  = 8    // directories below a "~/" or absolute glob's literal part
	maxGlobVisits = 2000 // entries looked at per such glob
	// racyWindow: a directory changed this recently may change again
	// within the file system's timestamp granularity without its mtime
	// moving, so its listing is not trusted from the cache.
	racyWindow = 2 * time.Second
)

// Found is what Existing found.
type Found struct {
	// Paths are the denied paths present now, resolved, sorted, without
	// duplicates. One may lie beneath another (~/.local and
	// ~/.local/share/fish/fish_history): a caller that cannot hide the
	// outer one still finds the inner one.
	Paths []string
	// Incomplete is set when the project walk stopped at its bound: files
	// in the directories it did not reach are not in Paths.
	Incomplete bool
}

// Existing returns the denied paths present on disk, for the sandbox to
// hide. Patterns anchored at the home directory or at an absolute path cost
// a stat each (a directory listing for a glob). Patterns of the project root
// need a walk of the project (.git excluded); its directory listings are
// cached and a directory is listed again only when its mtime changed, so a
// repeated call costs one lstat per directory. A symlink in the project that
// a pattern matches hides its target when the target lies inside the
// project; a target elsewhere is hidden only by a pattern of its own.
func (r *Rules) Existing() Found {
	if r == nil || len(r.rules) == 0 {
		return Found{}
	}
	var paths []string
	for i := range r.rules {
		rl := &r.rules[i]
		if rl.negate || rl.tree {
			continue
		}
		paths = append(paths, r.anchored(rl)...)
	}
	var found Found
	if r.rootRules && r.root != "" {
		var tree []string
		tree, found.Incomplete = r.cache.scan(r)
		for _, p := range tree {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			if workspace.Within(r.root, real) {
				paths = append(paths, real)
			}
		}
	}
	slices.Sort(paths)
	found.Paths = slices.Compact(paths)
	return found
}

// anchored finds the existing paths a pattern with a home or absolute base
// names, resolved.
func (r *Rules) anchored(rl *rule) []string {
	body := strings.TrimPrefix(rl.Pattern, "~/")
	body = strings.TrimPrefix(body, "/")
	body = strings.TrimSuffix(strings.TrimSuffix(body, "**"), "/")
	parts := strings.Split(body, "/")
	lit := 0
	for lit < len(parts) && !strings.ContainsAny(parts[lit], `*?[{\`) {
		lit++
	}
	start := filepath.Join(append([]string{rl.base}, parts[:lit]...)...)
	if lit == len(parts) {
		if _, err := os.Lstat(start); err != nil {
			return nil
		}
		if _, ok := r.Match(start); !ok {
			return nil
		}
		if real, err := filepath.EvalSymlinks(start); err == nil {
			return []string{real}
		}
		return nil
	}
	if _, ok := r.denied(start, true); ok {
		// A directory above the glob is denied itself (its own pattern
		// finds it).
		return nil
	}
	depth := len(parts) - lit
	if strings.Contains(body, "**") {
		depth = maxGlobDepth
	}
	var out []string
	visits := 0
	var walk func(dir string, left int)
	walk = func(dir string, left int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if visits++; visits > maxGlobVisits {
				return
			}
			p := filepath.Join(dir, e.Name())
			if r.Hides(p, e.Type()) {
				if real, err := filepath.EvalSymlinks(p); err == nil {
					out = append(out, real)
				}
				continue
			}
			if e.IsDir() && left > 1 {
				walk(p, left-1)
			}
		}
	}
	walk(start, depth)
	return out
}

// treeCache holds the project's directory listings as the deny rules see
// them: per directory, its mtime, the entries the rules hide and the
// subdirectories to descend into.
type treeCache struct {
	mu   sync.Mutex
	dirs map[string]*dirState
	gen  uint64
}

type dirState struct {
	mtime   time.Time
	racy    bool
	hidden  []string
	subdirs []string
	seen    uint64
}

func newTreeCache() *treeCache { return &treeCache{dirs: map[string]*dirState{}} }

// scan returns the hidden entries of the project tree, listing again only
// the directories whose mtime moved, and whether it stopped at its bound.
func (c *treeCache) scan(r *Rules) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	var out []string
	visited := 0
	stack := []string{r.root}
	incomplete := false
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited++; visited > maxTreeDirs {
			incomplete = true
			break
		}
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		st := c.dirs[dir]
		if st == nil || st.racy || !fi.ModTime().Equal(st.mtime) {
			st = listDir(r, dir, fi.ModTime())
			c.dirs[dir] = st
		}
		st.seen = c.gen
		out = append(out, st.hidden...)
		stack = append(stack, st.subdirs...)
	}
	// Directories that are gone (or were not reached) leave the cache.
	for d, st := range c.dirs {
		if st.seen != c.gen {
			delete(c.dirs, d)
		}
	}
	return out, incomplete
}

func listDir(r *Rules, dir string, mtime time.Time) *dirState {
	st := &dirState{mtime: mtime, racy: time.Since(mtime) < racyWindow}
	ents, err := os.ReadDir(dir)
	if err != nil {
		st.racy = true // unreadable now; try again next time
		return st
	}
	for _, e := range ents {
		name := e.Name()
		if name == ".git" {
			continue
		}
		p := dir + "/" + name
		if r.Hides(p, e.Type()) {
			st.hidden = append(st.hidden, p)
			continue
		}
		if e.IsDir() && !r.skip[p] {
			st.subdirs = append(st.subdirs, p)
		}
	}
	return st
}
