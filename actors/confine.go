package actors

import (
	"path/filepath"
	"strings"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/workspace"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// namedFiles records on a delegation the files its brief names, which the
// specialist alone may write.
func namedFiles(files []string) func(*messages.Delegate) {
	return func(d *messages.Delegate) {
		for _, f := range files {
			if f = strings.TrimSpace(f); f != "" {
				d.WriteFiles = append(d.WriteFiles, f)
			}
		}
	}
}

// confinedGuard narrows a specialist's path guard to the files its brief
// names: writes to any other file are refused by the guard as tool errors,
// so no prompt wording can widen them. An agent that already has a write
// filter (Test, Docs) keeps it; a guard that cannot be narrowed is
// returned as is only when no file is named.
func confinedGuard(root string, def *AgentDefinition, d *messages.Delegate, g tool.PathGuard) tool.PathGuard {
	if len(d.WriteFiles) == 0 || def.WriteScope != WriteAny {
		return g
	}
	f := &policy.WriteFilter{Agent: def.Name, Kind: "the files its brief names"}
	for _, name := range d.WriteFiles {
		f.Allow = append(f.Allow, relGlob(root, name))
	}
	switch pg := g.(type) {
	case *policy.Guard:
		return pg.WithFilter(f)
	case Narrowable:
		return pg.WithFilter(f)
	}
	return g
}

// Narrowable is a path guard wrapping a policy guard that can be narrowed
// as one: a worker's, which takes the session's paths for its tree's.
type Narrowable interface {
	WithFilter(f *policy.WriteFilter) tool.PathGuard
}

// relGlob turns a named file (absolute or relative to the root) into the
// root-relative, slash-separated pattern the guard's filter matches.
func relGlob(root, name string) string {
	p := filepath.Clean(name)
	if filepath.IsAbs(p) && workspace.Within(root, p) {
		if rel, err := filepath.Rel(root, p); err == nil {
			p = rel
		}
	}
	return filepath.ToSlash(strings.TrimPrefix(p, "./"))
}
