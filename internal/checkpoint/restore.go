package checkpoint

import (
	"errors"
	"fmt"
	"github.com/odin-code/odin/internal/fsutil"
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

// writeAtomic restores one file, creating its directory if a later change
// removed it.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o644
	}
	return fsutil.WriteFileAtomic(path, data, mode)
}
