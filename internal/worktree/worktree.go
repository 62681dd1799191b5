package worktree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/sandbox"
)

// DefaultMaxFileBytes bounds a file a patch carries (the write tools'
// limit is 10 MiB; a bigger file is reported as skipped).
const DefaultMaxFileBytes = 10 << 20

// Options configure a Manager.
type Options struct {
	// StateDir is Odin's state directory; worktrees live in its
	// worktrees folder. Required.
	StateDir string
	// Launcher runs git; nil runs it unconfined (with a scrubbed
	// environment and the repository's code-running settings disarmed).
	Launcher *sandbox.Launcher
	// MaxFileBytes bounds a file in a patch; 0 is DefaultMaxFileBytes.
	MaxFileBytes int64
}

// Manager creates and removes the worktrees of one Odin process.
type Manager struct {
	opts Options
	dir  string
	mu   sync.Mutex
	live map[string]*Tree
}

// gitMu serialises git worktree add: git takes no lock on the
// repository's worktree records. It is the process's, not a Manager's: a
// worker runs each remote task with a Manager of its own, and their
// worktrees share one mirror's records.
var gitMu sync.Mutex

// New returns a Manager; nothing is created until Create.
func New(opts Options) *Manager {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	return &Manager{opts: opts, dir: filepath.Join(opts.StateDir, "worktrees"), live: map[string]*Tree{}}
}

// Dir is the directory holding the worktrees.
func (m *Manager) Dir() string { return m.dir }

// Tree is one isolated worktree.
type Tree struct {
	// ID names it (the task's ID).
	ID string
	// Project is the project root the worktree copies; Root is the same
	// directory inside the worktree (the project may be a subdirectory
	// of its repository), where the specialist works.
	Project, Root string
	// Head is the commit it was made from; Dirty is set when the
	// project's uncommitted changes were copied in.
	Head  string
	Dirty bool

	m     *Manager
	entry string // <state>/worktrees/<id>
	work  string // the worktree's top directory
	top   string // the project repository's top directory
	sub   string // Project relative to top, slash-separated ("" at the top)
	base  string // tree object of the starting state
	// common is the repository's common git directory, whose worktrees
	// folder git writes when it adds or prunes one.
	common string
	g      git // runs in work with the private index and objects

	once      sync.Once
	removeErr error
}

// owner is the marker beside each worktree: who made it, so that a
// later process can tell an orphan from a worktree in use.
type owner struct {
	PID     int       `json:"pid"`
	Start   string    `json:"start"`
	Host    string    `json:"host"`
	Top     string    `json:"top"`
	Common  string    `json:"common,omitempty"`
	Project string    `json:"project"`
	Created time.Time `json:"created"`
}

const ownerFile = "owner.json"

// Create makes a worktree of the project at root (absolute, resolved) for
// task id: the repository's HEAD, then every uncommitted change of the
// project copied over it — modified, deleted, staged and untracked files,
// ignored ones left out. It returns ErrNotGit (wrapped) when root is not
// in a git repository with a commit.
func (m *Manager) Create(ctx context.Context, root, id string) (*Tree, error) {
	if m.opts.StateDir == "" {
		return nil, errors.New("worktree: no state directory to create worktrees in")
	}
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("worktree: invalid id %q", id)
	}
	// A project that is itself a linked worktree (a worker's tree of
	// a mirror) keeps its git directory elsewhere: git must see it.
	linked := linkedGitDirs(root)
	probe := git{launcher: m.opts.Launcher, dir: root, visible: linked}
	out, err := probe.run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not inside one (%v)", ErrNotGit, root, err)
	}
	top, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	out, err = probe.run(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("%w: the repository at %s has no commit yet", ErrNotGit, top)
	}
	head := strings.TrimSpace(string(out))
	sub, err := filepath.Rel(top, root)
	if err != nil || !filepath.IsLocal(sub) && sub != "." {
		return nil, fmt.Errorf("worktree: %s is not inside its repository %s", root, top)
	}
	if sub == "." {
		sub = ""
	}
	common := git{launcher: m.opts.Launcher, dir: top, visible: linked}
	if err := common.neutraliseFilters(ctx); err != nil {
		return nil, err
	}
	out, err = common.run(ctx, "rev-parse", "--git-common-dir")
	if err != nil {
		return nil, err
	}
	commonDir := strings.TrimSpace(string(out))
	if !filepath.IsAbs(commonDir) {
		commonDir = filepath.Join(top, commonDir)
	}
	// The new worktree's .git names a record in the common directory.
	common.visible = append(common.visible, commonDir)

	entry := filepath.Join(m.dir, id)
	if err := fsutil.PrivateDir(m.dir); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if err := os.Mkdir(entry, 0o700); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	t := &Tree{ID: id, Project: root, Head: head, m: m, entry: entry, top: top, sub: filepath.ToSlash(sub),
		work: filepath.Join(entry, "tree")}
	// The marker goes first: a crash from here on leaves an entry that
	// names its dead owner, which Sweep removes.
	host, _ := os.Hostname()
	marker, _ := json.Marshal(owner{PID: os.Getpid(), Start: procStart(os.Getpid()), Host: host, Top: top, Common: commonDir, Project: root, Created: time.Now().UTC()})
	if err := fsutil.WriteFileAtomic(filepath.Join(entry, ownerFile), marker, 0o600); err != nil {
		_ = os.RemoveAll(entry)
		return nil, fmt.Errorf("worktree: %w", err)
	}
	t.common = commonDir
	m.mu.Lock()
	m.live[id] = t
	m.mu.Unlock()
	if err := t.populate(ctx, common, commonDir); err != nil {
		_ = t.Remove(context.WithoutCancel(ctx))
		return nil, err
	}
	return t, nil
}

// populate checks the worktree out, copies the project's uncommitted
// changes into it and records the starting state.
func (t *Tree) populate(ctx context.Context, common git, commonDir string) error {
	records := filepath.Join(commonDir, "worktrees")
	if err := os.MkdirAll(records, 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	gitMu.Lock()
	_, err := common.with(records, t.entry).run(ctx, "worktree", "add", "--detach", "-f", t.work, t.Head)
	gitMu.Unlock()
	if err != nil {
		return err
	}
	t.Root = t.work
	if t.sub != "" {
		t.Root = filepath.Join(t.work, filepath.FromSlash(t.sub))
	}
	changed, err := common.run(ctx, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "HEAD", "--")
	if err != nil {
		return err
	}
	untracked, err := common.run(ctx, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	for _, rel := range append(splitZ(changed), splitZ(untracked)...) {
		if strings.HasSuffix(rel, "/") {
			continue // a nested repository: not part of this one
		}
		t.Dirty = true
		if err := copyEntry(t.top, t.work, rel); err != nil {
			return err
		}
	}
	// The snapshots go to a private index and object directory: the
	// project's repository only lends its objects.
	priv := filepath.Join(t.entry, "git")
	if err := os.MkdirAll(filepath.Join(priv, "objects"), 0o700); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	t.g = git{launcher: t.m.opts.Launcher, dir: t.work, overrides: common.overrides, writable: []string{priv}, visible: common.visible, env: []string{
		"GIT_INDEX_FILE=" + filepath.Join(priv, "index"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(priv, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(commonDir, "objects"),
	}}
	// Starting from the worktree's own index saves hashing every
	// unchanged file again.
	if gd, err := (&git{launcher: t.m.opts.Launcher, dir: t.work, visible: common.visible}).run(ctx, "rev-parse", "--absolute-git-dir"); err == nil {
		if idx, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(gd)), "index")); err == nil {
			_ = os.WriteFile(filepath.Join(priv, "index"), idx, 0o600)
		}
	}
	base, err := t.snapshot(ctx)
	if err != nil {
		return err
	}
	t.base = base
	return nil
}

// snapshot records the worktree as it is (ignored files left out) and
// returns its tree object.
func (t *Tree) snapshot(ctx context.Context) (string, error) {
	if _, err := t.g.run(ctx, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	out, err := t.g.run(ctx, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// copyEntry makes rel in dst what it is in src: a file with its content
// and mode, a symbolic link, or nothing.
func copyEntry(src, dst, rel string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("worktree: git listed a path outside the repository: %q", rel)
	}
	from, to := filepath.Join(src, filepath.FromSlash(rel)), filepath.Join(dst, filepath.FromSlash(rel))
	fi, err := fsutil.LstatIn(src, from)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := fsutil.RemoveIn(dst, to); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("worktree: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("worktree: %w", err)
	}
	if err := fsutil.MkdirAllIn(dst, filepath.Dir(to), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	switch {
	case fi.Mode().IsRegular():
		data, _, err := fsutil.ReadFileIn(src, from, 0)
		if err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		if err := fsutil.WriteFileIn(dst, to, data, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(from)
		if err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
		_ = fsutil.RemoveIn(dst, to)
		if err := os.Symlink(target, to); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
	}
	return nil
}

// linkedGitDirs returns the git directory of the linked worktree that
// holds root, and its repository's common directory, when root is in
// one: a sandboxed git hides /tmp but for what it is shown, and these
// may lie elsewhere in it than the tree (a worker's mirror). Nil for a
// repository whose .git is a directory inside it.
func linkedGitDirs(root string) []string {
	for dir := root; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, ".git"))
		if err == nil {
			gd, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
			if !ok {
				return nil
			}
			gd = strings.TrimSpace(gd)
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(dir, gd)
			}
			out := []string{filepath.Clean(gd)}
			if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
				cd := strings.TrimSpace(string(c))
				if !filepath.IsAbs(cd) {
					cd = filepath.Join(gd, cd)
				}
				out = append(out, filepath.Clean(cd))
			}
			return out
		}
		if fi, err := os.Stat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
			return nil
		}
		if filepath.Dir(dir) == dir {
			return nil
		}
	}
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range bytes.Split(b, []byte{0}) {
		if len(s) > 0 {
			out = append(out, string(s))
		}
	}
	return out
}

// Remove deletes the worktree and git's record of it. Safe to call more
// than once and concurrently.
func (t *Tree) Remove(ctx context.Context) error {
	t.once.Do(func() {
		// Git's record of the worktree goes with it; only this one: a
		// git worktree prune run here could not see worktrees hidden from
		// it (the sandbox's private /tmp) and would drop their records.
		record := recordOf(t.work, t.common)
		t.removeErr = removeAll(t.entry)
		if record != "" {
			t.removeErr = errors.Join(t.removeErr, removeAll(record))
		}
		t.m.mu.Lock()
		delete(t.m.live, t.ID)
		t.m.mu.Unlock()
	})
	return t.removeErr
}

// recordOf is git's record of the worktree at work (the directory its
// .git file names), "" when there is none or it is not one of the
// repository's worktree records: nothing else is ever removed.
func recordOf(work, common string) string {
	data, err := os.ReadFile(filepath.Join(work, ".git"))
	if err != nil || common == "" {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	dir = filepath.Clean(strings.TrimSpace(dir))
	if !filepath.IsAbs(dir) || filepath.Dir(dir) != filepath.Join(common, "worktrees") {
		return ""
	}
	return dir
}

// removeAll removes dir, making read-only directories in it writable
// first when a plain removal fails (a module cache written by a build).
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// Close removes every worktree this Manager created and has not removed.
func (m *Manager) Close() error {
	m.mu.Lock()
	trees := make([]*Tree, 0, len(m.live))
	for _, t := range m.live {
		trees = append(trees, t)
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, t := range trees {
		errs = append(errs, t.Remove(ctx))
	}
	return errors.Join(errs...)
}

// Sweep removes the worktrees whose owner process is dead (a run killed
// with SIGKILL, a crash) and prunes their repositories' records. Entries
// of other hosts are left alone; an entry without a readable marker is
// removed once it is older than a minute (a crash between creating it and
// writing the marker). It returns the entries removed.
func (m *Manager) Sweep(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	host, _ := os.Hostname()
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m.mu.Lock()
		_, mine := m.live[e.Name()]
		m.mu.Unlock()
		if mine {
			continue
		}
		entry := filepath.Join(m.dir, e.Name())
		var o owner
		data, err := os.ReadFile(filepath.Join(entry, ownerFile))
		if err != nil || json.Unmarshal(data, &o) != nil {
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < time.Minute {
				continue
			}
		} else if o.Host != host || alive(o.PID, o.Start) {
			continue
		}
		record := recordOf(filepath.Join(entry, "tree"), o.Common)
		if err := removeAll(entry); err != nil {
			errs = append(errs, err)
			continue
		}
		if record != "" {
			if err := removeAll(record); err != nil {
				errs = append(errs, err)
			}
		}
		removed = append(removed, entry)
	}
	return removed, errors.Join(errs...)
}
