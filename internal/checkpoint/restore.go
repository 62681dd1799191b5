package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ConflictError lists files that changed after their change set was
// committed: restoring them would destroy someone else's work.
type ConflictError struct {
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("these files changed after Odin's change; undo would overwrite that work: %s (use --force to restore anyway)",
		strings.Join(e.Files, ", "))
}

// Restore puts every file back as it was before its change set: original
// content and mode, or removed if the change set created it. Unless force,
// it first checks that no file changed since the change set was committed
// and refuses with a *ConflictError otherwise, touching nothing.
func Restore(files []File, force bool) error {
	if !force {
		var changed []string
		for _, f := range files {
			if HashFile(f.Path) != f.AfterHash {
				changed = append(changed, f.Path)
			}
		}
		if len(changed) > 0 {
			return &ConflictError{Files: changed}
		}
	}
	var errs []error
	for _, f := range files {
		if !f.Existed {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := writeAtomic(f.Path, f.Content, f.Mode); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, so an interruption leaves either the old or the new file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".odin-restore-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	if err := os.Chmod(name, mode); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}
