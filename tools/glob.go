package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/search"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed glob.md
var globDescription string

// globLimit is how many paths Glob returns; the rest are counted.
const globLimit = 100

// GlobInput is Glob's input (seed 000 schema).
type GlobInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty" jsonschema:"Default: project root"`
}

// GlobMeta is Glob's structured result, for Odin itself.
type GlobMeta struct {
	Files     []string `json:"files"` // the paths shown, newest first
	Total     int      `json:"total"` // matches before the cap
	Truncated bool     `json:"truncated"`
}

// NewGlob returns Glob: files matching a glob (ripgrep --glob rules, so
// `*.go` matches at any depth and `src/**/*.ts` under src), honouring
// ignore files and skipping hidden files and .git, newest first.
func NewGlob() tool.Tool {
	return newBuiltin[GlobInput]("Glob", tool.ClassRead, globDescription, runGlob)
}

func runGlob(ctx context.Context, env *tool.Env, in GlobInput) (tool.Result, error) {
	dir, bad, err := resolveSearchPath(ctx, env, "path", in.Path, false)
	if err != nil {
		return tool.Result{}, err
	}
	if bad != nil {
		return *bad, nil
	}
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return tool.Errorf("path %s is a file, not a directory; pass the directory to search in", dir), nil
	}
	pattern := strings.TrimSpace(in.Pattern)
	if pattern == "" {
		return tool.Errorf("pattern is empty; give a glob such as \"**/*.go\""), nil
	}
	if filepath.IsAbs(pattern) {
		// Models often pass an absolute pattern; take it relative to the
		// directory searched when it lies inside it.
		rel, err := filepath.Rel(dir, pattern)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return tool.Errorf("pattern %q is an absolute path outside %s; give a pattern relative to path (e.g. \"**/*.go\")", pattern, dir), nil
		}
		pattern = filepath.ToSlash(rel)
	}
	pattern = strings.TrimPrefix(pattern, "./")
	files, err := search.Files(ctx, dir, pattern, search.WalkOptions{Exclude: walkExclude(env)})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("Glob was cancelled: %v", ctx.Err()), nil
		}
		return tool.Errorf("invalid pattern: %v", err), nil
	}
	if len(files) == 0 {
		return tool.Result{Output: fmt.Sprintf("No files found matching %q in %s.", in.Pattern, dir), IsError: true, Meta: GlobMeta{}}, nil
	}
	meta := GlobMeta{Total: len(files), Truncated: len(files) > globLimit}
	var b strings.Builder
	for i, f := range files {
		if i == globLimit {
			break
		}
		b.WriteString(f.Path)
		b.WriteByte('\n')
		meta.Files = append(meta.Files, f.Path)
	}
	if meta.Truncated {
		fmt.Fprintf(&b, "\n[%d more files not shown (%d matched; the newest %d are listed); narrow the pattern or the path]\n", len(files)-globLimit, len(files), globLimit)
	}
	return tool.Result{Output: b.String(), Meta: meta}, nil
}
