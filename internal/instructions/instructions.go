package instructions

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/workspace"
)

// Names are the instruction files looked for in each directory, in order
// of preference: the first one present is used.
var Names = []string{"ODIN.md", "AGENTS.md", "CLAUDE.md"}

// MaxBytes caps one instruction file.
const MaxBytes = 64 << 10

// Source is one loaded instruction file.
type Source struct {
	Path    string
	Content string
}

// Load returns the instruction files that apply to root: the user-level
// file in userDir (if any), then one file per directory from the git root
// (or root, outside git) down to root.
func Load(root, userDir string) ([]Source, error) {
	var out []Source
	if userDir != "" {
		if s, ok, err := first(userDir); err != nil {
			return nil, err
		} else if ok {
			out = append(out, s)
		}
	}
	top := root
	if g, ok := workspace.GitRoot(root); ok {
		top = g
	}
	var dirs []string
	for d := root; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		s, ok, err := first(dirs[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func first(dir string) (Source, bool, error) {
	for _, n := range Names {
		p := filepath.Join(dir, n)
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return Source{}, false, fmt.Errorf("instructions: %w", err)
		}
		if len(data) > MaxBytes {
			data = append(data[:MaxBytes], []byte("\n[… truncated]")...)
		}
		return Source{Path: p, Content: string(data)}, true, nil
	}
	return Source{}, false, nil
}

// Join renders the sources as one text, each under a line naming its file.
func Join(srcs []Source) string {
	var b strings.Builder
	for i, s := range srcs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "<!-- from %s -->\n%s", s.Path, strings.TrimSpace(s.Content))
	}
	return b.String()
}
