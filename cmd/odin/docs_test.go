package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStreamJSONDocCoversEveryEvent: docs/stream-json.md has a heading for
// every event type messages defines, so the documented vocabulary cannot
// fall behind the code.
func TestStreamJSONDocCoversEveryEvent(t *testing.T) {
	doc, err := os.ReadFile("../../docs/stream-json.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("../../messages/*.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("messages sources: %v", err)
	}
	var types []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				fn, ok := n.(*ast.FuncDecl)
				if !ok || fn.Name.Name != "EventType" || fn.Body == nil || len(fn.Body.List) != 1 {
					return true
				}
				if ret, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
					if lit, ok := ret.Results[0].(*ast.BasicLit); ok {
						name, _ := strconv.Unquote(lit.Value)
						types = append(types, name)
					}
				}
				return false
			})
		}
	}
	if len(types) < 20 {
		t.Fatalf("found only %d event types in messages: %v", len(types), types)
	}
	for _, ty := range types {
		if !strings.Contains(string(doc), "`"+ty+"`") {
			t.Errorf("docs/stream-json.md does not document the %q event", ty)
		}
	}
}
