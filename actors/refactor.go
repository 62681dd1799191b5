package actors

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/refactor"
)

// refactors finds the significant refactors of a change set from the
// checkpoint's before and after of each changed file. It reads files, so
// it runs off the mailbox.
func refactors(root string, q config.Quality, files []string, tracker ChangeTracker) []string {
	var rf []refactor.File
	for _, abs := range files {
		before, existed, ok := tracker.Snapshot(abs)
		if !ok {
			continue
		}
		after, err := readFileLimited(abs)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Unreadable or too large to analyse: its size still counts.
			after, exists = nil, true
		}
		rf = append(rf, refactor.File{Path: filepath.ToSlash(relPath(root, abs)), Before: before, Existed: existed, After: after, Exists: exists})
	}
	return refactor.Detect(rf, refactor.Options{MaxLines: q.RefactorLines})
}
