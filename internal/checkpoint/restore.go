package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/fsutil"
)

// ConflictError lists files that changed after Odin's change: restoring
// them would destroy someone else's work.
type ConflictError struct {
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("these files were changed by someone else after Odin's change; undo would overwrite that work: %s (use --force to restore them anyway)",
		strings.Join(e.Files, ", "))
}

// TypeChangedError lists paths whose type changed since the checkpoint (a
// file replaced by a symlink, a directory on the way replaced by a
// symlink, a file replaced by a directory...). Undo never writes through
// them, even with force: the write could land anywhere.
type TypeChangedError struct {
	Files []string
}

func (e *TypeChangedError) Error() string {
	return fmt.Sprintf("these paths are no longer regular files reachable without symbolic links, as they were when Odin changed them; undo will not write through them (not even with --force): %s",
		strings.Join(e.Files, ", "))
}

// State is what undo found a file to be.
type State int

// The states of a file at undo time.
const (
	// StateOdin: the file is as Odin left it (its final state or, after a
	// crash, the content of an interrupted write).
	StateOdin State = iota
	// StateBefore: the file is already as it was before the change set
	// (the process died before the write landed); nothing to restore.
	StateBefore
	// StateChanged: someone else changed the file after Odin's change.
	StateChanged
	// StateTypeChanged: the path is no longer a regular file, or a
	// component of it is a symbolic link.
	StateTypeChanged
)

// Outcome is what Restore did with one file or directory.
type Outcome struct {
	// Path is absolute; a directory's ends in a separator.
	Path    string
	State   State
	Existed bool
	// Dir is true for a directory.
	Dir bool
	// Action is "restored", "removed" or "unchanged"; for a directory
	// also "recreated" or "kept" (Reason says why); "not restorable" for
	// a change Odin had no copy of (Reason says why).
	Action string
	Reason string
}

// Actions of an Outcome beyond restored, removed and unchanged.
const (
	ActionRecreated     = "recreated"
	ActionKept          = "kept"
	ActionNotRestorable = "not restorable"
)

// Classify says which state f's file is in now, reading it beneath root
// without following symbolic links. A symbolic link at the path itself is
// judged by its target, as a command's change to it was recorded.
func Classify(root string, f File) State {
	fi, err := fsutil.LstatIn(root, f.Path)
	var cur []byte
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur = nil
	case err != nil:
		// A symlinked directory on the way, or the path left the root.
		return StateTypeChanged
	case fi.Mode().Type() == fs.ModeSymlink:
		target, err := fsutil.ReadlinkIn(root, f.Path)
		switch {
		case err != nil:
			return StateTypeChanged
		case slices.Contains(f.AfterHashes, linkHash(target)):
			return StateOdin
		case f.Existed && f.Mode.Type() == fs.ModeSymlink && target == string(f.Content):
			return StateBefore
		}
		return StateChanged
	case !fi.Mode().IsRegular():
		return StateTypeChanged
	default:
		data, _, err := fsutil.ReadFileIn(root, f.Path, 0)
		if err != nil {
			return StateTypeChanged
		}
		cur = data
	}
	if cur == nil {
		switch {
		case !f.Existed:
			return StateBefore
		case slices.Contains(f.AfterHashes, Deleted):
			return StateOdin // an applied patch removed it
		}
		return StateChanged // Odin's write tools never delete
	}
	if slices.Contains(f.AfterHashes, hashBytes(cur)) {
		return StateOdin
	}
	if f.Existed && f.Mode.Type() == 0 && bytes.Equal(cur, f.Content) {
		return StateBefore
	}
	return StateChanged
}

// Restore puts every file back as it was before its change set: original
// content and mode, or removed if the change set created it. Every path is
// written beneath the longest of roots that holds it (else "/") without
// following a symbolic link in any component. It first classifies every
// file and touches nothing when one changed type (*TypeChangedError,
// whatever force says) or, unless force, when one was changed by someone
// else (*ConflictError). A file already in its before-state (a crash
// before the write landed) is left as it is and reported "unchanged".
//
// Directories the change set removed are made again before the files are
// restored; those it created are removed after, deepest first, when they
// are empty (a directory holding anything the change set did not create
// is kept, and the outcome says so). Entries Odin had no copy of are
// reported "not restorable" and left as they are.
func Restore(files []File, roots []string, force bool) ([]Outcome, error) {
	out := make([]Outcome, len(files))
	var changed, typed []string
	for i, f := range files {
		out[i] = Outcome{Path: f.Path, Existed: f.Existed, Dir: f.Mode.IsDir()}
		switch {
		case f.Mode&fs.ModeIrregular != 0:
			out[i].Action, out[i].Reason = ActionNotRestorable, string(f.Content)
			continue
		case f.Mode.IsDir():
			continue
		}
		st := Classify(fsutil.RootOf(f.Path, roots...), f)
		out[i].State = st
		switch st {
		case StateChanged:
			changed = append(changed, f.Path)
		case StateTypeChanged:
			typed = append(typed, f.Path)
		}
	}
	if len(typed) > 0 {
		return nil, &TypeChangedError{Files: typed}
	}
	if len(changed) > 0 && !force {
		return nil, &ConflictError{Files: changed}
	}
	var errs []error
	// Parents before children.
	for _, i := range dirOrder(files, true) {
		if files[i].Existed {
			errs = append(errs, recreateDir(files[i], roots, &out[i]))
		}
	}
	for i, f := range files {
		if t := f.Mode.Type(); t != 0 && t != fs.ModeSymlink {
			continue
		}
		root := fsutil.RootOf(f.Path, roots...)
		// A write killed before its rename left a temporary file, also
		// where there is nothing to restore.
		_ = fsutil.CleanStaleTemps(root, filepath.Dir(f.Path))
		if out[i].State == StateBefore {
			out[i].Action = "unchanged"
			continue
		}
		if !f.Existed {
			out[i].Action = "removed"
			if err := fsutil.RemoveIn(root, f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		out[i].Action = "restored"
		if f.Mode.Type() == fs.ModeSymlink {
			// The link as it was, made in place of what is there now
			// (never through it); its target is not followed or checked:
			// it is the user's own link, back as they had it.
			if err := restoreLink(root, f.Path, string(f.Content)); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := restoreFile(root, f.Path, f.Content, f.Mode); err != nil {
			errs = append(errs, err)
		}
	}
	// Children before parents: a created directory holding only created
	// ones empties as they go.
	for _, i := range dirOrder(files, false) {
		if !files[i].Existed {
			errs = append(errs, removeCreatedDir(files[i], roots, &out[i]))
		}
	}
	return out, errors.Join(errs...)
}

// dirOrder returns the indexes of the directory entries of files sorted
// by path, parents first (down) or children first.
func dirOrder(files []File, down bool) []int {
	var idx []int
	for i, f := range files {
		if f.Mode.IsDir() {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if down {
			return strings.Compare(files[a].Path, files[b].Path)
		}
		return strings.Compare(files[b].Path, files[a].Path)
	})
	return idx
}

// recreateDir makes a directory the change set removed again.
func recreateDir(f File, roots []string, o *Outcome) error {
	dir := filepath.Clean(f.Path)
	root := fsutil.RootOf(dir, roots...)
	if fi, err := fsutil.LstatIn(root, dir); err == nil && fi.IsDir() {
		o.Action = "unchanged"
		return nil
	}
	o.Action = ActionRecreated
	perm := f.Mode.Perm()
	if perm == 0 {
		perm = 0o755
	}
	return fsutil.MkdirAllIn(root, dir, perm)
}

// removeCreatedDir removes a directory the change set created if it is
// empty now; one that holds anything else is kept.
func removeCreatedDir(f File, roots []string, o *Outcome) error {
	dir := filepath.Clean(f.Path)
	root := fsutil.RootOf(dir, roots...)
	fi, err := fsutil.LstatIn(root, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		o.Action = "unchanged"
		return nil
	case err != nil || !fi.IsDir():
		o.Action, o.Reason = ActionKept, "it is no longer a directory Odin can reach without following a symbolic link"
		return nil
	}
	// A write killed before its rename may have left a temporary file
	// in it: that is Odin's, not the user's.
	_ = fsutil.CleanStaleTemps(root, dir)
	err = fsutil.RemoveDirIn(root, dir)
	switch {
	case err == nil:
		o.Action = "removed"
	case errors.Is(err, fsutil.ErrNotEmpty):
		o.Action, o.Reason = ActionKept, "it holds files the change did not create"
	default:
		o.Action, o.Reason = ActionKept, err.Error()
	}
	return nil
}

// restoreFile restores one file, creating its directory if a later change
// removed it.
func restoreFile(root, path string, data []byte, mode fs.FileMode) error {
	if err := fsutil.MkdirAllIn(root, filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	return fsutil.WriteFileIn(root, path, data, mode)
}

// restoreLink makes path a symbolic link to target again, creating its
// directory if a later change removed it.
func restoreLink(root, path, target string) error {
	if err := fsutil.MkdirAllIn(root, filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.SymlinkIn(root, path, target)
}
