package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/fsutil"
	"github.com/odin-code/odin/internal/sandbox"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// ConflictError is a patch that does not merge with the project: the
// project changed these files (relative, slash-separated) since the
// specialist started, in the same places. Nothing of the patch was
// applied.
type ConflictError struct {
	Files []string
}

func (e *ConflictError) Error() string {
	return "worktree: the patch conflicts with the project in " + strings.Join(e.Files, ", ")
}

// ApplyOptions are how a patch is written into the project: through the
// same locks and change tracker as a write tool's edit.
type ApplyOptions struct {
	// Root is the project root (absolute, resolved).
	Root string
	// Guard, when set, authorises every path for writing (protected
	// paths, the agent's write scope); a refusal applies nothing.
	Guard tool.PathGuard
	// Locks are the session's path locks, held for every file of the
	// patch from reading the project's version to writing the result.
	Locks *tool.PathLocks
	// BeforeWrite snapshots a file before it changes; IntendWrite records
	// the content about to be written; IntendDelete records that the file
	// is about to be removed. An error aborts the apply.
	BeforeWrite  func(path string) error
	IntendWrite  func(path string, content []byte) error
	IntendDelete func(path string) error
	// Launcher runs git merge-file; nil runs it unconfined.
	Launcher *sandbox.Launcher
	// TempDir holds the three versions of a file while git merges them;
	// it must be visible to the Launcher's processes. Default os.TempDir.
	TempDir string
}

// step is what applying one file does.
type step struct {
	abs     string
	content []byte
	remove  bool
	perm    fs.FileMode
}

// Apply merges patch p into the project: for each file, the project's
// current content (ours) is merged with the specialist's result (theirs)
// against what the specialist started from (base). A file nobody else
// touched takes the result as it is; one the project changed too is merged
// by git merge-file; a file where both changed the same lines, or one side
// deleted what the other changed, is a conflict. With any conflict nothing
// is written and the error is a *ConflictError naming the files. It
// returns the files written or removed (absolute).
func Apply(ctx context.Context, p *messages.Patch, opts ApplyOptions) ([]string, error) {
	if p == nil || len(p.Files) == 0 {
		return nil, nil
	}
	type item struct {
		f   messages.PatchFile
		abs string
	}
	items := make([]item, 0, len(p.Files))
	seen := map[string]bool{}
	for _, f := range p.Files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) || slices.ContainsFunc(strings.Split(f.Path, "/"), func(c string) bool { return strings.EqualFold(c, ".git") }) {
			return nil, fmt.Errorf("worktree: the patch names an invalid path %q", f.Path)
		}
		abs := filepath.Join(opts.Root, rel)
		if seen[abs] {
			return nil, fmt.Errorf("worktree: the patch names %q twice", f.Path)
		}
		seen[abs] = true
		if opts.Guard != nil {
			resolved, err := opts.Guard.Resolve(ctx, abs, tool.AccessWrite)
			if err != nil {
				return nil, fmt.Errorf("worktree: %s: %w", f.Path, err)
			}
			if resolved != abs {
				return nil, fmt.Errorf("worktree: %s leads to %s through a symbolic link; the patch is not applied", f.Path, resolved)
			}
		}
		items = append(items, item{f, abs})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.abs, b.abs) })
	if opts.Locks != nil {
		for _, it := range items {
			unlock := opts.Locks.Lock(it.abs)
			defer unlock()
		}
	}
	var steps []step
	var conflicts []string
	for _, it := range items {
		s, ok, err := plan(ctx, opts, it.f, it.abs)
		if err != nil {
			return nil, err
		}
		if !ok {
			conflicts = append(conflicts, it.f.Path)
			continue
		}
		if s != nil {
			steps = append(steps, *s)
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Files: conflicts}
	}
	var done []string
	for _, s := range steps {
		if err := applyStep(opts, s); err != nil {
			return done, err
		}
		done = append(done, s.abs)
	}
	return done, nil
}

// plan works out one file: a step (nil when the project already is as
// the patch wants), or ok false for a conflict.
func plan(ctx context.Context, opts ApplyOptions, f messages.PatchFile, abs string) (*step, bool, error) {
	ours, perm, exists, err := readOurs(opts.Root, abs)
	if err != nil {
		return nil, false, err
	}
	if exists && perm == 0 {
		return nil, false, nil // not a regular file any more
	}
	newPerm := fs.FileMode(0o644)
	if exists {
		newPerm = perm
	}
	if f.Exec {
		newPerm |= 0o111
	} else if f.Op == messages.PatchAdd {
		newPerm &^= 0o111
	}
	switch f.Op {
	case messages.PatchAdd:
		switch {
		case !exists:
			return &step{abs: abs, content: f.New, perm: newPerm}, true, nil
		case bytes.Equal(ours, f.New):
			return nil, true, nil
		}
		return nil, false, nil // both created it, differently
	case messages.PatchDelete:
		switch {
		case !exists:
			return nil, true, nil
		case bytes.Equal(ours, f.Base):
			return &step{abs: abs, remove: true}, true, nil
		}
		return nil, false, nil // the project changed what the specialist deleted
	case messages.PatchModify:
		switch {
		case !exists:
			return nil, false, nil // the project deleted what the specialist changed
		case bytes.Equal(ours, f.Base):
			return &step{abs: abs, content: f.New, perm: newPerm}, true, nil
		case bytes.Equal(ours, f.New):
			return nil, true, nil
		}
		merged, clean, err := mergeFile(ctx, opts, ours, f.Base, f.New)
		if err != nil || !clean {
			return nil, false, err
		}
		return &step{abs: abs, content: merged, perm: newPerm}, true, nil
	}
	return nil, false, fmt.Errorf("worktree: unknown patch operation %q for %s", f.Op, f.Path)
}

// readOurs reads the project's version of abs without following links;
// perm is 0 for something that is not a regular file.
func readOurs(root, abs string) ([]byte, fs.FileMode, bool, error) {
	fi, err := fsutil.LstatIn(root, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, false, nil
	case errors.Is(err, fsutil.ErrSymlink):
		return nil, 0, true, nil
	case err != nil:
		return nil, 0, false, fmt.Errorf("worktree: %w", err)
	case !fi.Mode().IsRegular():
		return nil, 0, true, nil
	}
	data, _, err := fsutil.ReadFileIn(root, abs, 0)
	if err != nil {
		return nil, 0, false, fmt.Errorf("worktree: %w", err)
	}
	return data, fi.Mode().Perm(), true, nil
}

// mergeFile merges with git merge-file, which works on three plain files
// and reads no repository. Binary content is never merged: a side with a
// NUL byte makes it a conflict.
func mergeFile(ctx context.Context, opts ApplyOptions, ours, base, theirs []byte) ([]byte, bool, error) {
	if slices.ContainsFunc([][]byte{ours, base, theirs}, func(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }) {
		return nil, false, nil
	}
	dir, err := os.MkdirTemp(opts.TempDir, "odin-merge-")
	if err != nil {
		return nil, false, fmt.Errorf("worktree: %w", err)
	}
	defer os.RemoveAll(dir)
	names := []string{"project", "base", "specialist"}
	for i, b := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
			return nil, false, fmt.Errorf("worktree: %w", err)
		}
	}
	g := git{launcher: opts.Launcher, dir: dir}
	out, err := g.run(ctx, "merge-file", "-p", "-L", "project", "-L", "base", "-L", "specialist", "project", "base", "specialist")
	switch code := exitCode(err); {
	case err == nil:
		return out, true, nil
	case code > 0 && code < 128:
		return nil, false, nil // that many conflicting hunks
	}
	return nil, false, err
}

// applyStep carries one step out, checkpointed first.
func applyStep(opts ApplyOptions, s step) error {
	if opts.BeforeWrite != nil {
		if err := opts.BeforeWrite(s.abs); err != nil {
			return fmt.Errorf("worktree: checkpoint %s: %w", s.abs, err)
		}
	}
	if s.remove {
		if opts.IntendDelete != nil {
			if err := opts.IntendDelete(s.abs); err != nil {
				return fmt.Errorf("worktree: checkpoint %s: %w", s.abs, err)
			}
		}
		if err := fsutil.RemoveIn(opts.Root, s.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("worktree: %w", err)
		}
		return nil
	}
	if opts.IntendWrite != nil {
		if err := opts.IntendWrite(s.abs, s.content); err != nil {
			return fmt.Errorf("worktree: checkpoint %s: %w", s.abs, err)
		}
	}
	if err := fsutil.MkdirAllIn(opts.Root, filepath.Dir(s.abs), 0o755); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	if err := fsutil.WriteFileIn(opts.Root, s.abs, s.content, s.perm); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	return nil
}

// Apply is the package's Apply with the Manager's launcher running git
// and its directory holding the merge's temporary files. A nil Manager
// applies with git unconfined and os.TempDir.
func (m *Manager) Apply(ctx context.Context, p *messages.Patch, opts ApplyOptions) ([]string, error) {
	if m != nil {
		if opts.Launcher == nil {
			opts.Launcher = m.opts.Launcher
		}
		if opts.TempDir == "" {
			if err := fsutil.PrivateDir(m.dir); err == nil {
				opts.TempDir = m.dir
			}
		}
	}
	return Apply(ctx, p, opts)
}
