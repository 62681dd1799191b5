package repomap

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// parseGo extracts the definitions of a Go file (functions, methods, types,
// interface methods, top-level constants and variables) and counts every
// other identifier it uses. A file with syntax errors still yields what
// go/parser recovered, with the error noted.
func parseGo(src []byte) ([]Symbol, map[string]int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil, nil, err
	}
	var defs []Symbol
	names := map[*ast.Ident]bool{}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			names[d.Name] = true
			s := Symbol{Name: d.Name.Name, Kind: "func", Line: line(d.Pos()), Sig: goSig(fset, &ast.FuncDecl{Recv: d.Recv, Name: d.Name, Type: d.Type})}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind, s.Parent = "method", recvName(d.Recv.List[0].Type)
			}
			defs = append(defs, s)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					names[sp.Name] = true
					defs = append(defs, Symbol{Name: sp.Name.Name, Kind: "type", Line: line(sp.Pos()), Sig: typeSig(fset, sp)})
					if it, ok := sp.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							ft, ok := m.Type.(*ast.FuncType)
							if !ok || len(m.Names) == 0 {
								continue // embedded interface
							}
							names[m.Names[0]] = true
							defs = append(defs, Symbol{Name: m.Names[0].Name, Kind: "method", Parent: sp.Name.Name, Line: line(m.Pos()),
								Sig: m.Names[0].Name + strings.TrimPrefix(goSig(fset, ft), "func")})
						}
					}
				case *ast.ValueSpec:
					kw := d.Tok.String()
					for _, n := range sp.Names {
						if n.Name == "_" {
							continue
						}
						names[n] = true
						sig := kw + " " + n.Name
						if sp.Type != nil {
							sig += " " + goSig(fset, sp.Type)
						}
						defs = append(defs, Symbol{Name: n.Name, Kind: kw, Line: line(n.Pos()), Sig: sig})
					}
				}
			}
		}
	}
	// A name after a dot (x.Name) is counted as ".Name": only such a use
	// can be a method's, so a method named len is not credited with every
	// call of the builtin len. A name qualified by an imported package
	// (errors.New) is counted as "errors.New", so that it is credited only
	// to a package of that name in the tree, if there is one.
	imports := map[string]bool{}
	for _, im := range f.Imports {
		imports[importName(im)] = true
		if im.Name != nil {
			names[im.Name] = true
		}
	}
	refs := map[string]int{}
	sel := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			sel[x.Sel] = true
			if pkg, ok := x.X.(*ast.Ident); ok && imports[pkg.Name] {
				sel[pkg] = true
				refs[pkg.Name+"."+x.Sel.Name]++
				return false
			}
			refs["."+x.Sel.Name]++
		case *ast.Ident:
			if !names[x] && !sel[x] && x.Name != "_" {
				refs[x.Name]++
			}
		}
		return true
	})
	return defs, refs, err
}

// recvName is the type name of a method receiver: T for T, *T, T[K] and
// *T[K].
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// typeSig is a type's declaration without the body of a struct or
// interface: those are listed by their members, or not at all.
func typeSig(fset *token.FileSet, sp *ast.TypeSpec) string {
	head := "type " + sp.Name.Name
	if sp.TypeParams != nil {
		head += strings.TrimPrefix(goSig(fset, &ast.FuncType{TypeParams: sp.TypeParams, Params: &ast.FieldList{}}), "func")
		head = strings.TrimSuffix(head, "()")
	}
	if sp.Assign.IsValid() {
		head += " ="
	}
	switch sp.Type.(type) {
	case *ast.StructType:
		return head + " struct"
	case *ast.InterfaceType:
		return head + " interface"
	}
	return head + " " + goSig(fset, sp.Type)
}

func goSig(fset *token.FileSet, n any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return ""
	}
	return oneLine(b.String())
}

// maxSig bounds a signature: past it the rest is elided.
const maxSig = 160

// oneLine collapses whitespace runs to one space and cuts long text.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSig {
		cut := maxSig
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// importName is the name an import is used by: its alias, else the last
// element of its path without a major-version suffix (v2) or a gopkg.in
// style suffix (yaml.v3), which is what the package is almost always
// called.
func importName(im *ast.ImportSpec) string {
	if im.Name != nil {
		return im.Name.Name
	}
	p, err := strconv.Unquote(im.Path.Value)
	if err != nil {
		return ""
	}
	parts := strings.Split(p, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	if i := strings.Index(last, ".v"); i > 0 {
		last = last[:i]
	}
	return strings.TrimPrefix(strings.TrimPrefix(last, "go-"), "go")
}
