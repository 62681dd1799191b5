package search

import (
	"context"
	"os"
	"slices"
	"time"
)

// File is one file found by Files.
type File struct {
	Path    string // absolute
	Rel     string // relative to the root, slash-separated
	ModTime time.Time
}

// Files returns the files under root (absolute, clean) that match the
// ripgrep-style glob (rg --files -g PATTERN: a pattern without a slash
// matches at any depth, `!` negates), honouring opts' rules, sorted by
// modification time, newest first, then by path. An empty pattern matches
// every file.
func Files(ctx context.Context, root, pattern string, opts WalkOptions) ([]File, error) {
	if pattern != "" {
		g, err := NewGlobFilter(pattern)
		if err != nil {
			return nil, err
		}
		opts.Globs = g
	}
	per := make([][]File, NumWorkers(opts))
	err := Walk(ctx, root, opts, func(w int, e Entry) error {
		f := File{Path: e.Path, Rel: e.Rel}
		if info, err := os.Lstat(e.Path); err == nil {
			f.ModTime = info.ModTime()
		}
		per[w] = append(per[w], f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := slices.Concat(per...)
	slices.SortFunc(out, func(a, b File) int {
		if c := b.ModTime.Compare(a.ModTime); c != 0 {
			return c
		}
		return ComparePaths(a.Path, b.Path)
	})
	return out, nil
}
