package tools

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed ls.md
var lsDescription string

// lsLimit is how many entries LS lists; the rest are counted.
const lsLimit = 1000

// LSInput is LS's input (seed 000 schema).
type LSInput struct {
	Path   string   `json:"path"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"Name patterns (*.log) or absolute paths to skip"`
}

// LSEntry is one listed entry, for Odin itself.
type LSEntry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir,omitempty"`
	Size int64  `json:"size,omitempty"`
	Link string `json:"link,omitempty"` // a symlink's target
}

// LSMeta is LS's structured result.
type LSMeta struct {
	Path      string    `json:"path"`
	Entries   []LSEntry `json:"entries"`
	Total     int       `json:"total"`
	Truncated bool      `json:"truncated"`
}

// NewLS returns LS: one directory's entries, directories first, files with
// their sizes, symlinks with their targets.
func NewLS() tool.Tool {
	return newBuiltin[LSInput]("LS", tool.ClassRead, lsDescription, runLS,
		tool.WithSchema(func(s *jsonschema.Schema) {
			p := s.Properties["ignore"]
			p.Type, p.Types = "array", nil
		}))
}

func runLS(ctx context.Context, env *tool.Env, in LSInput) (tool.Result, error) {
	dir, bad, err := resolveSearchPath(ctx, env, "path", in.Path, true)
	if err != nil {
		return tool.Result{}, err
	}
	if bad != nil {
		return *bad, nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return tool.Errorf("cannot list %s: %v", dir, err), nil
	}
	if !info.IsDir() {
		return tool.Errorf("%s is a file (%d bytes), not a directory; use ReadFile to read it", dir, info.Size()), nil
	}
	var ignores []*workspace.Glob
	for _, p := range in.Ignore {
		p = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p), "/"))
		if p == "" {
			continue
		}
		g, err := workspace.CompileGlob(p)
		if err != nil {
			return tool.Errorf("invalid ignore pattern: %v", err), nil
		}
		ignores = append(ignores, g)
	}
	ents, err := os.ReadDir(dir)
	if err != nil && len(ents) == 0 {
		return tool.Errorf("cannot list %s: %v", dir, err), nil
	}
	var dirs, files []LSEntry
	hide := walkExclude(env)
	for _, e := range ents {
		name := e.Name()
		if name == ".git" || lsIgnored(ignores, dir, name) {
			continue
		}
		if hide != nil && hide(filepath.Join(dir, name), e.Type()) {
			continue
		}
		ent := LSEntry{Name: name}
		switch {
		case e.IsDir():
			ent.Dir = true
			dirs = append(dirs, ent)
			continue
		case e.Type()&fs.ModeSymlink != 0:
			ent.Link, _ = os.Readlink(filepath.Join(dir, name))
		default:
			if fi, err := e.Info(); err == nil {
				ent.Size = fi.Size()
			}
		}
		files = append(files, ent)
	}
	all := slices.Concat(dirs, files)
	meta := LSMeta{Path: dir, Total: len(all), Truncated: len(all) > lsLimit}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/ (%s, %s)\n", strings.TrimSuffix(dir, "/"), count(len(dirs), "directory", "directories"), count(len(files), "file", "files"))
	if len(all) == 0 {
		b.WriteString("(empty directory)\n")
	}
	for i, e := range all {
		if i == lsLimit {
			break
		}
		meta.Entries = append(meta.Entries, e)
		switch {
		case e.Dir:
			fmt.Fprintf(&b, "  %s/\n", e.Name)
		case e.Link != "":
			fmt.Fprintf(&b, "  %s -> %s\n", e.Name, e.Link)
		default:
			fmt.Fprintf(&b, "  %s (%s)\n", e.Name, humanSize(e.Size))
		}
	}
	if meta.Truncated {
		fmt.Fprintf(&b, "\n[%d more entries not shown; use Glob or pass ignore patterns to narrow the listing]\n", len(all)-lsLimit)
	}
	return tool.Result{Output: b.String(), Meta: meta}, nil
}

// lsIgnored matches an entry against the ignore globs by name and by
// absolute path, so both "*.log" and "/abs/dir/build" work.
func lsIgnored(globs []*workspace.Glob, dir, name string) bool {
	full := filepath.Join(dir, name)
	for _, g := range globs {
		if g.Match(name) || g.Match(full) || g.Match(strings.TrimPrefix(full, "/")) {
			return true
		}
	}
	return false
}

// humanSize formats a byte count compactly ("812 B", "4.2 KB", "3.0 MB").
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTP"[exp])
}

// count renders n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
