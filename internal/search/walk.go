package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"

	"github.com/odin-code/odin/internal/workspace"
)

// WalkOptions selects what Walk yields. The zero value walks like ripgrep
// with no flags: ignore files honoured, hidden entries and .git skipped,
// symlinks neither followed nor yielded.
type WalkOptions struct {
	// Hidden includes entries whose name starts with a dot (.git is still
	// skipped).
	Hidden bool
	// NoIgnore disregards .gitignore, .ignore, .rgignore and git excludes.
	NoIgnore bool
	// Globs are ripgrep --glob overrides, relative to the walk's root.
	Globs *GlobFilter
	// Types keeps only files of the given ripgrep file type.
	Types *TypeFilter
	// MaxDepth limits the depth (the root's children are at depth 1); 0
	// means no limit.
	MaxDepth int
	// Dirs makes Walk yield directories too (their contents still follow
	// the rules; Globs and Types never hide a directory unless a `!glob`
	// excludes it).
	Dirs bool
	// Symlinks makes Walk yield symbolic links (never followed).
	Symlinks bool
	// Workers bounds the goroutines walking and calling fn; 0 means
	// GOMAXPROCS.
	Workers int
	// Ignore configures how ignore files are found.
	Ignore workspace.RulesOptions
	// Exclude, when set, leaves out an entry (path absolute, typ its type
	// bits) before any other rule, and never descends into an excluded
	// directory: the read deny list. The walk's root is not passed to it.
	Exclude func(path string, typ fs.FileMode) bool
}

// Entry is one file system entry found by Walk.
type Entry struct {
	// Path is absolute and clean.
	Path string
	// Rel is Path relative to the walk's root, slash-separated; empty for
	// the root itself.
	Rel string
	// Type holds the fs.FileMode type bits (0 for a regular file).
	Type fs.FileMode
	// Depth is 0 for the root, 1 for its children, and so on.
	Depth int
}

// IsDir reports whether the entry is a directory.
func (e Entry) IsDir() bool { return e.Type.IsDir() }

// WalkFunc receives each entry. worker identifies the calling goroutine
// (0 <= worker < the number of workers), so callers can keep per-worker
// state without locks. Returning ErrStop ends the walk; any other error
// ends it and is returned by Walk.
type WalkFunc func(worker int, e Entry) error

func (o WalkOptions) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// NumWorkers is the number of distinct worker indexes Walk passes to fn.
func NumWorkers(opts WalkOptions) int { return opts.workers() }

type dirJob struct {
	path  string
	depth int
	rules *workspace.Rules
	root  bool
}

// Walk walks root (absolute, clean) in parallel and calls fn for every file
// the options keep, from up to opts.Workers goroutines at once, in no
// particular order. A root that is a file is yielded as is, with no rule
// applied (as ripgrep treats an explicit path). Directories that cannot be
// read are skipped. Walk stops when ctx is done and returns ctx.Err().
func Walk(ctx context.Context, root string, opts WalkOptions, fn WalkFunc) error {
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		err := fn(0, Entry{Path: root, Type: info.Mode().Type()})
		if errors.Is(err, ErrStop) {
			return nil
		}
		return err
	}
	w := &walker{ctx: ctx, root: root, opts: opts, fn: fn}
	w.cond = sync.NewCond(&w.mu)
	var rules *workspace.Rules
	if !opts.NoIgnore {
		rules = workspace.LoadRules(root, opts.Ignore)
	}
	w.stack = append(w.stack, dirJob{path: root, rules: rules, root: true})
	w.pending = 1
	n := opts.workers()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work(i)
		}()
	}
	wg.Wait()
	if w.err != nil && !errors.Is(w.err, ErrStop) {
		return w.err
	}
	return ctx.Err()
}

type walker struct {
	ctx  context.Context
	root string
	opts WalkOptions
	fn   WalkFunc

	mu      sync.Mutex
	cond    *sync.Cond
	stack   []dirJob
	pending int // jobs queued or running
	err     error
}

func (w *walker) pop() (dirJob, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && w.pending > 0 && w.err == nil {
		w.cond.Wait()
	}
	if w.err != nil || len(w.stack) == 0 {
		return dirJob{}, false
	}
	j := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	return j, true
}

func (w *walker) push(jobs []dirJob) {
	if len(jobs) == 0 {
		return
	}
	w.mu.Lock()
	w.stack = append(w.stack, jobs...)
	w.pending += len(jobs)
	w.mu.Unlock()
	if len(jobs) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
}

func (w *walker) done(err error) {
	w.mu.Lock()
	w.pending--
	if err != nil && w.err == nil {
		w.err = err
	}
	finished := w.pending == 0 || w.err != nil
	w.mu.Unlock()
	if finished {
		w.cond.Broadcast()
	}
}

func (w *walker) work(worker int) {
	var subdirs []dirJob
	for {
		j, ok := w.pop()
		if !ok {
			return
		}
		subdirs = subdirs[:0]
		err := w.ctx.Err()
		if err == nil {
			subdirs, err = w.visitDir(worker, j, subdirs)
		}
		// Push children before marking this job done so pending never
		// drops to zero while work remains.
		if err == nil {
			w.push(subdirs)
		}
		w.done(err)
	}
}

func readDir(path string) ([]os.DirEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func (w *walker) visitDir(worker int, j dirJob, subdirs []dirJob) ([]dirJob, error) {
	ents, err := readDir(j.path)
	if err != nil && len(ents) == 0 {
		return subdirs, nil // unreadable directory: skipped, as ripgrep does
	}
	rules := j.rules
	if rules != nil && !j.root {
		special := false
		for _, e := range ents {
			switch e.Name() {
			case ".git", workspace.GitignoreName, workspace.IgnoreName, workspace.RgignoreName:
				special = true
			}
		}
		if special {
			rules = rules.Descend(j.path, func(name string) bool {
				for _, e := range ents {
					if e.Name() == name {
						return true
					}
				}
				return false
			})
		}
	}
	depth := j.depth + 1
	if w.opts.MaxDepth > 0 && depth > w.opts.MaxDepth {
		return subdirs, nil
	}
	prefix := j.path + "/"
	if j.path == "/" {
		prefix = "/"
	}
	relStart := len(w.root) + 1
	if w.root == "/" {
		relStart = 1
	}
	for _, e := range ents {
		name := e.Name()
		if name == ".git" {
			continue
		}
		typ := e.Type()
		isDir := typ.IsDir()
		path := prefix + name
		rel := path[relStart:]
		if w.opts.Exclude != nil && w.opts.Exclude(path, typ) {
			continue
		}
		if !w.keep(rules, path, rel, name, isDir) {
			continue
		}
		switch {
		case isDir:
			if w.opts.Dirs {
				if err := w.fn(worker, Entry{Path: path, Rel: rel, Type: typ, Depth: depth}); err != nil {
					return subdirs, err
				}
			}
			if w.opts.MaxDepth == 0 || depth < w.opts.MaxDepth {
				subdirs = append(subdirs, dirJob{path: path, depth: depth, rules: rules})
			}
		case typ.IsRegular():
			if err := w.fn(worker, Entry{Path: path, Rel: rel, Type: typ, Depth: depth}); err != nil {
				return subdirs, err
			}
		case typ&fs.ModeSymlink != 0 && w.opts.Symlinks:
			if err := w.fn(worker, Entry{Path: path, Rel: rel, Type: typ, Depth: depth}); err != nil {
				return subdirs, err
			}
		}
	}
	return subdirs, nil
}

// keep applies ripgrep's order of precedence: --glob overrides decide
// outright; then ignore files; then file types; then the hidden rule, which
// a whitelist from either earlier stage suspends.
func (w *walker) keep(rules *workspace.Rules, path, rel, name string, isDir bool) bool {
	if g := w.opts.Globs; g != nil {
		switch g.Match(rel, isDir) {
		case workspace.MatchIgnore:
			return false
		case workspace.MatchWhitelist:
			return true
		}
	}
	whitelisted := false
	if rules != nil {
		switch rules.Match(path, isDir) {
		case workspace.MatchIgnore:
			return false
		case workspace.MatchWhitelist:
			whitelisted = true
		}
	}
	if t := w.opts.Types; t != nil && !isDir {
		switch t.Match(name) {
		case workspace.MatchIgnore:
			return false
		case workspace.MatchWhitelist:
			whitelisted = true
		}
	}
	if !whitelisted && !w.opts.Hidden && len(name) > 0 && name[0] == '.' {
		return false
	}
	return true
}

// GlobFilter is a set of ripgrep --glob overrides: a glob keeps the files
// it matches and, when any non-negated glob is present, only those; a glob
// starting with `!` excludes what it matches (whole directories
// included). Patterns follow gitignore rules relative to the walk's root:
// one without a slash matches at any depth. Immutable.
type GlobFilter struct {
	file       *workspace.IgnoreFile
	whitelists int
}

// NewGlobFilter compiles globs; an invalid glob is an error naming it.
func NewGlobFilter(globs ...string) (*GlobFilter, error) {
	f := &workspace.IgnoreFile{}
	for _, g := range globs {
		if err := f.AddLine(g); err != nil {
			return nil, fmt.Errorf("glob %q: %w", g, err)
		}
	}
	if f.Len() == 0 {
		return nil, nil
	}
	// In an override, "!x" excludes and "x" includes: the inverse of an
	// ignore file, whose rules we reuse.
	return &GlobFilter{file: f, whitelists: f.Len() - f.Whitelists()}, nil
}

// Match returns the override verdict for rel (relative to the walk root).
func (g *GlobFilter) Match(rel string, isDir bool) workspace.Match {
	if g == nil {
		return workspace.MatchNone
	}
	switch g.file.Match(rel, isDir) {
	case workspace.MatchIgnore:
		return workspace.MatchWhitelist
	case workspace.MatchWhitelist:
		return workspace.MatchIgnore
	}
	if g.whitelists > 0 && !isDir {
		return workspace.MatchIgnore
	}
	return workspace.MatchNone
}
