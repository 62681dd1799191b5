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

// Outcome is what Restore did with one file.
type Outcome struct {
	Path    string
	State   State
	Existed bool
	// Action is "restored", "removed" or "unchanged".
	Action string
}

// Classify says which state f's file is in now, reading it beneath root
// without following symbolic links.
func Classify(root string, f File) State {
	fi, err := fsutil.LstatIn(root, f.Path)
	var cur []byte
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur = nil
	case err != nil:
		// A symlinked directory on the way, or the path left the root.
		return StateTypeChanged
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
	if f.Existed && bytes.Equal(cur, f.Content) {
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
func Restore(files []File, roots []string, force bool) ([]Outcome, error) {
	out := make([]Outcome, len(files))
	var changed, typed []string
	for i, f := range files {
		st := Classify(fsutil.RootOf(f.Path, roots...), f)
		out[i] = Outcome{Path: f.Path, State: st, Existed: f.Existed}
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
	for i, f := range files {
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
		if err := restoreFile(root, f.Path, f.Content, f.Mode); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
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
