package search

import (
	"fmt"
	"slices"
	"strings"

	"github.com/odin-code/odin/internal/workspace"
)

// TypeFilter keeps the files of chosen ripgrep file types (rg --type):
// a file whose base name matches one of the types' globs is kept, every
// other file is dropped. Immutable.
type TypeFilter struct {
	names []string
	globs []*workspace.Glob
}

// TypeNames lists the known file type names, sorted.
func TypeNames() []string {
	t := defaultTypes()
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewTypeFilter selects the named types. An unknown name is an error that
// lists close names, so a model can correct itself.
func NewTypeFilter(names ...string) (*TypeFilter, error) {
	table := defaultTypes()
	f := &TypeFilter{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		globs, ok := table[n]
		if !ok {
			return nil, fmt.Errorf("unknown file type %q; known types include: %s", n, strings.Join(similarTypes(n, table), ", "))
		}
		f.names = append(f.names, n)
		for _, g := range globs {
			cg, err := workspace.CompileGlob(g)
			if err != nil {
				return nil, fmt.Errorf("file type %q: %w", n, err)
			}
			f.globs = append(f.globs, cg)
		}
	}
	if len(f.names) == 0 {
		return nil, nil
	}
	return f, nil
}

// Match returns the verdict on a file's base name.
func (f *TypeFilter) Match(name string) workspace.Match {
	if f == nil {
		return workspace.MatchNone
	}
	for _, g := range f.globs {
		if g.Match(name) {
			return workspace.MatchWhitelist
		}
	}
	return workspace.MatchIgnore
}

// similarTypes suggests type names sharing a prefix with n, falling back to
// the most common ones.
func similarTypes(n string, table map[string][]string) []string {
	var out []string
	for name := range table {
		if len(n) > 0 && (strings.HasPrefix(name, n[:1]) && (strings.Contains(name, n) || strings.Contains(n, name))) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	common := []string{"go", "js", "ts", "py", "rust", "java", "c", "cpp", "rb", "php", "md", "json", "yaml", "sh", "html", "css"}
	for _, c := range common {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}
