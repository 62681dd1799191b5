package tools

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/odin-code/odin/internal/search"
	"github.com/odin-code/odin/tools/tool"
)

//go:embed tree.md
var treeDescription string

// Tree limits.
const (
	treeDefaultDepth = 3
	treeMaxDepth     = 20
	treeLimit        = 500
)

// TreeInput is Tree's input.
type TreeInput struct {
	Path  string `json:"path,omitempty" jsonschema:"Default: project root"`
	Depth int    `json:"depth,omitempty" jsonschema:"Levels (default 3)"`
}

// TreeMeta is Tree's structured result.
type TreeMeta struct {
	Path      string `json:"path"`
	Dirs      int    `json:"dirs"`
	Files     int    `json:"files"`
	Shown     int    `json:"shown"`
	Truncated bool   `json:"truncated"`
}

// NewTree returns Tree: an indented view of a directory's structure down to
// a depth, honouring ignore files and skipping hidden entries like Glob.
// When there are too many entries, shallower ones are kept first so the
// overall shape survives the cut.
func NewTree() tool.Tool {
	return newBuiltin[TreeInput]("Tree", tool.ClassRead, treeDescription, runTree,
		tool.WithSchema(func(s *jsonschema.Schema) {
			one, max := 1.0, float64(treeMaxDepth)
			s.Properties["depth"].Minimum = &one
			s.Properties["depth"].Maximum = &max
		}))
}

type treeNode struct {
	rel   string
	depth int
	dir   bool
}

func runTree(ctx context.Context, env *tool.Env, in TreeInput) (tool.Result, error) {
	root, bad, err := resolveSearchPath(ctx, env, "path", in.Path, false)
	if err != nil {
		return tool.Result{}, err
	}
	if bad != nil {
		return *bad, nil
	}
	if info, err := os.Stat(root); err == nil && !info.IsDir() {
		return tool.Errorf("path %s is a file, not a directory; use ReadFile to read it", root), nil
	}
	depth := in.Depth
	if depth <= 0 {
		depth = treeDefaultDepth
	}
	depth = min(depth, treeMaxDepth)
	var mu sync.Mutex
	var nodes []treeNode
	err = search.Walk(ctx, root, search.WalkOptions{Dirs: true, Symlinks: true, MaxDepth: depth, Exclude: walkExclude(env)}, func(_ int, e search.Entry) error {
		mu.Lock()
		nodes = append(nodes, treeNode{rel: e.Rel, depth: e.Depth, dir: e.IsDir()})
		mu.Unlock()
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Errorf("Tree was cancelled: %v", ctx.Err()), nil
		}
		return tool.Errorf("cannot walk %s: %v", root, err), nil
	}
	meta := TreeMeta{Path: root}
	for _, n := range nodes {
		if n.dir {
			meta.Dirs++
		} else {
			meta.Files++
		}
	}
	// Breadth first: keep the shallow entries when the cap bites.
	slices.SortFunc(nodes, func(a, b treeNode) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), search.ComparePaths(a.rel, b.rel))
	})
	if len(nodes) > treeLimit {
		nodes, meta.Truncated = nodes[:treeLimit], true
	}
	meta.Shown = len(nodes)
	children := map[string][]treeNode{}
	for _, n := range nodes {
		parent := ""
		if i := strings.LastIndexByte(n.rel, '/'); i >= 0 {
			parent = n.rel[:i]
		}
		children[parent] = append(children[parent], n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/\n", strings.TrimSuffix(root, "/"))
	var print func(parent string, indent int)
	print = func(parent string, indent int) {
		kids := children[parent]
		slices.SortFunc(kids, func(a, b treeNode) int {
			if a.dir != b.dir {
				if a.dir {
					return -1
				}
				return 1
			}
			return strings.Compare(a.rel, b.rel)
		})
		for _, k := range kids {
			name := k.rel[strings.LastIndexByte(k.rel, '/')+1:]
			b.WriteString(strings.Repeat("  ", indent))
			b.WriteString(name)
			if k.dir {
				b.WriteByte('/')
			}
			b.WriteByte('\n')
			if k.dir {
				print(k.rel, indent+1)
			}
		}
	}
	print("", 1)
	if len(nodes) == 0 {
		b.WriteString("  (empty, or every entry is ignored or hidden)\n")
	}
	fmt.Fprintf(&b, "\n%s, %s", count(meta.Dirs, "directory", "directories"), count(meta.Files, "file", "files"))
	if meta.Truncated {
		fmt.Fprintf(&b, "; %d entries not shown (deepest first): use a smaller depth or a subdirectory as path", meta.Dirs+meta.Files-meta.Shown)
	}
	b.WriteByte('\n')
	return tool.Result{Output: b.String(), Meta: meta}, nil
}
