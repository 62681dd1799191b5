package refactor

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// File is one file of a change set.
type File struct {
	// Path is relative to the project root, slash-separated.
	Path string
	// Before is the content before the change; Existed is false for a
	// file the change set created.
	Before  []byte
	Existed bool
	// After is the content now; Exists is false for a file the change set
	// deleted.
	After  []byte
	Exists bool
}

// Options tune Detect.
type Options struct {
	// MaxLines is the number of changed lines (added plus removed, over
	// the whole change set) from which the change is significant; 0 turns
	// the size rule off.
	MaxLines int
}

// maxDiffBytes bounds the files whose lines are diffed; a larger file
// counts all its lines as changed, which errs towards review.
const maxDiffBytes = 2 << 20

// Detect returns one reason per significant refactor found, sorted:
// "renamed exported identifier Total → Sum (price.go)", "moved exported
// identifier Sum from a.go to b.go", "moved file a.go → b.go", "large
// change: 412 lines changed (quality.refactor_lines: 300)".
func Detect(files []File, opts Options) []string {
	var reasons []string
	reasons = append(reasons, symbolMoves(files)...)
	reasons = append(reasons, fileMoves(files)...)
	if opts.MaxLines > 0 {
		if n := ChangedLines(files); n >= opts.MaxLines {
			reasons = append(reasons, fmt.Sprintf("large change: %d lines changed (quality.refactor_lines: %d)", n, opts.MaxLines))
		}
	}
	return reasons
}

// ChangedLines counts the lines added and removed over the change set.
func ChangedLines(files []File) int {
	n := 0
	for _, f := range files {
		before, after := "", ""
		if f.Existed {
			before = string(f.Before)
		}
		if f.Exists {
			after = string(f.After)
		}
		if len(before) > maxDiffBytes || len(after) > maxDiffBytes {
			n += countLines(before) + countLines(after)
			continue
		}
		for _, e := range udiff.Lines(before, after) {
			n += countLines(before[e.Start:e.End]) + countLines(e.New)
		}
	}
	return n
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// decl is an exported top-level Go identifier: its package directory,
// file, and its declaration with the name taken out, so that a renamed
// identifier keeps its shape.
type decl struct {
	dir, file, name, shape string
}

// symbolMoves pairs the exported identifiers the change set removed with
// those it added: the same name in another file of the package is a move,
// another name with the same declaration in the same package is a rename.
func symbolMoves(files []File) []string {
	var removed, added []decl
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".go") || strings.HasSuffix(f.Path, "_test.go") {
			continue
		}
		var before, after map[string]decl
		if f.Existed {
			before = exported(f.Path, f.Before)
		}
		if f.Exists {
			after = exported(f.Path, f.After)
		}
		for name, d := range before {
			if _, ok := after[name]; !ok {
				removed = append(removed, d)
			}
		}
		for name, d := range after {
			if _, ok := before[name]; !ok {
				added = append(added, d)
			}
		}
	}
	sortDecls(removed)
	sortDecls(added)
	used := make([]bool, len(added))
	var out []string
	// Moves first: the same name reappearing elsewhere in the package.
	var unmatched []decl
	for _, r := range removed {
		found := false
		for i, a := range added {
			if !used[i] && a.dir == r.dir && a.name == r.name && a.file != r.file {
				used[i], found = true, true
				out = append(out, fmt.Sprintf("moved exported identifier %s from %s to %s", r.name, r.file, a.file))
				break
			}
		}
		if !found {
			unmatched = append(unmatched, r)
		}
	}
	for _, r := range unmatched {
		for i, a := range added {
			if !used[i] && a.dir == r.dir && a.shape == r.shape {
				used[i] = true
				where := r.file
				if a.file != r.file {
					where = r.file + " → " + a.file
				}
				out = append(out, fmt.Sprintf("renamed exported identifier %s → %s (%s)", r.name, a.name, where))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortDecls(ds []decl) {
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].file != ds[j].file {
			return ds[i].file < ds[j].file
		}
		return ds[i].name < ds[j].name
	})
}

// exported maps the exported top-level identifiers of a Go file (methods
// as Type.Method) to their declarations; nil when it does not parse.
func exported(file string, src []byte) map[string]decl {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	dir := path.Dir(file)
	out := map[string]decl{}
	render := func(n any) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return b.String()
	}
	add := func(name, shape string) {
		out[name] = decl{dir: dir, file: file, name: name, shape: shape}
	}
	for _, dl := range f.Decls {
		switch d := dl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name, shape := d.Name.Name, "func "+render(d.Type)
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := recvName(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
				shape = "method " + recv + " " + render(d.Type)
			}
			add(name, shape)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						add(s.Name.Name, "type "+render(s.Type))
					}
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						shape := d.Tok.String()
						if s.Type != nil {
							shape += " " + render(s.Type)
						}
						if i < len(s.Values) {
							shape += " = " + render(s.Values[i])
						}
						add(n.Name, shape)
					}
				}
			}
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// fileMoves pairs deleted files with created ones of the same content
// (ignoring blank lines and a changed Go package clause).
func fileMoves(files []File) []string {
	var deleted, created []File
	for _, f := range files {
		switch {
		case f.Existed && !f.Exists:
			deleted = append(deleted, f)
		case !f.Existed && f.Exists:
			created = append(created, f)
		}
	}
	var out []string
	used := make([]bool, len(created))
	for _, d := range deleted {
		for i, c := range created {
			if !used[i] && normalized(d.Before) == normalized(c.After) {
				used[i] = true
				out = append(out, fmt.Sprintf("moved file %s → %s", d.Path, c.Path))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

func normalized(b []byte) string {
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "package ") {
			continue
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
