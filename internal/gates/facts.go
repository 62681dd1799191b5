package gates

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/messages"
)

// ChangeFacts are the facts a gate decision is made from.
type ChangeFacts struct {
	// Files are the changed files, relative to the project root.
	Files []string
	// Quality holds quality.risk_paths and quality.public_api.
	Quality config.Quality
	// APIChanges are Go files whose exported API changed, with what changed.
	APIChanges map[string][]string
	// Requested is the Orchestrator model's reason for asking review, if any.
	Requested string
	// Refactors are the significant refactors found (internal/refactor):
	// renames and moves of exported identifiers or files, a large change.
	Refactors []string
	// Acceptance is the number of acceptance criteria the plan's todo
	// items carry: QA must check them.
	Acceptance int
}

// Decide is the quality-gate rule (seed 004, enforced in code): two or more
// changed files, a risk path, a public API change or an explicit request
// make review and QA mandatory. Every reason is recorded.
func Decide(f ChangeFacts) messages.GateDecision {
	d := messages.GateDecision{Files: slices.Clone(f.Files), Reasons: []string{}}
	if n := len(f.Files); n >= 2 {
		d.Reasons = append(d.Reasons, fmt.Sprintf("multi-file change: %d files changed", n))
	}
	for _, file := range f.Files {
		if g, ok := f.Quality.MatchRiskPath(filepath.ToSlash(file)); ok {
			d.Reasons = append(d.Reasons, fmt.Sprintf("risk path: %s matches %s", file, g))
		}
	}
	files := make([]string, 0, len(f.APIChanges))
	for file := range f.APIChanges {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		d.Reasons = append(d.Reasons, fmt.Sprintf("public API change in %s: %s", file, strings.Join(f.APIChanges[file], ", ")))
	}
	for _, file := range f.Files {
		if strings.HasSuffix(file, ".go") {
			continue
		}
		if g, ok := f.Quality.MatchPublicAPI(filepath.ToSlash(file)); ok {
			d.Reasons = append(d.Reasons, fmt.Sprintf("public API file: %s matches %s", file, g))
		}
	}
	if f.Acceptance > 0 {
		d.Reasons = append(d.Reasons, fmt.Sprintf("acceptance criteria to verify: %d", f.Acceptance))
	}
	for _, r := range f.Refactors {
		d.Reasons = append(d.Reasons, "significant refactor: "+r)
	}
	if f.Requested != "" {
		d.Reasons = append(d.Reasons, "requested by the Orchestrator: "+f.Requested)
	}
	d.ReviewRequired = len(d.Reasons) > 0
	d.QARequired = d.ReviewRequired
	return d
}

// GoAPIChanges compares the exported API of a Go file before and after a
// change: exported functions, methods on exported types, types, and
// package-level variables and constants, with their signatures. Test files
// and package main have no public API. A file that does not parse is
// compared as changed only if it parsed before.
func GoAPIChanges(path string, before, after []byte, existed bool) []string {
	if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
		return nil
	}
	var old map[string]string
	if existed {
		old = exportedAPI(before)
	}
	cur := exportedAPI(after)
	if cur == nil && old == nil {
		return nil
	}
	var out []string
	for name, sig := range cur {
		prev, ok := old[name]
		switch {
		case !ok:
			out = append(out, "added "+name)
		case prev != sig:
			out = append(out, "changed "+name)
		}
	}
	for name := range old {
		if _, ok := cur[name]; !ok {
			out = append(out, "removed "+name)
		}
	}
	sort.Strings(out)
	return out
}

// exportedAPI maps each exported identifier of a Go source file to its
// declaration text; nil when the file does not parse or is package main.
func exportedAPI(src []byte) map[string]string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil || f.Name.Name == "main" {
		return nil
	}
	api := map[string]string{}
	render := func(n any) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return b.String()
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
			}
			api[name] = render(d.Type)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						api[s.Name.Name] = render(exportedShape(s))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							sig := ""
							if s.Type != nil {
								sig = render(s.Type)
							}
							api[n.Name] = d.Tok.String() + " " + sig
						}
					}
				}
			}
		}
	}
	return api
}

// exportedShape strips unexported struct fields and interface methods so
// that changes to them do not count as API changes.
func exportedShape(s *ast.TypeSpec) *ast.TypeSpec {
	cp := *s
	switch t := s.Type.(type) {
	case *ast.StructType:
		st := *t
		fl := &ast.FieldList{}
		for _, f := range t.Fields.List {
			keep := len(f.Names) == 0 // embedded
			for _, n := range f.Names {
				keep = keep || n.IsExported()
			}
			if keep {
				nf := *f
				nf.Doc, nf.Comment = nil, nil
				fl.List = append(fl.List, &nf)
			}
		}
		st.Fields = fl
		cp.Type = &st
	}
	cp.Doc, cp.Comment = nil, nil
	return &cp
}

func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// BlockingIssues are the review issues that send a change back to Code:
// every critical or major issue, and every issue whose severity is not one
// of messages.Severities (a reviewer that says "high" or "blocker" means it
// and must not pass by a vocabulary mismatch). A review that does not
// approve the change but names no blocking issue is itself blocking: its
// rejection becomes one major issue carrying the review's summary, so that
// "approved: false" can never end in a passed gate.
func BlockingIssues(r messages.ReviewResult) []messages.ReviewIssue {
	var out []messages.ReviewIssue
	for _, is := range r.Issues {
		switch strings.ToLower(strings.TrimSpace(is.Severity)) {
		case messages.SeverityMinor, messages.SeverityInfo:
		default:
			out = append(out, is)
		}
	}
	if len(out) == 0 && !r.Approved {
		why := strings.TrimSpace(r.Summary)
		if why == "" {
			why = "no reason given"
		}
		out = append(out, messages.ReviewIssue{Severity: messages.SeverityMajor, Category: "correctness",
			Message: "the review did not approve the change: " + why})
	}
	return out
}
