package repomap

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/llm"
)

// DefaultBudget is the token budget of a map when the caller names none.
const DefaultBudget = 1024

// Request asks for a map.
type Request struct {
	// Scope limits the map to a file or directory, relative to the root
	// (slash- or OS-separated); empty or "." maps everything. The ranking
	// always counts references from the whole tree.
	Scope string
	// Budget is the most tokens the map may take (estimated as Odin
	// estimates prompts); DefaultBudget when 0.
	Budget int
	// Focus names identifiers to favour (e.g. ones the user mentioned).
	Focus []string
}

// Result is a rendered map.
type Result struct {
	// Text is the map: a header line, then per file its path and one line
	// per definition ("  line signature"), best-ranked files first.
	Text string
	// Tokens is the estimate of Text, at most the budget.
	Tokens int
	// Shown and Total count definitions (in scope); ShownFiles and
	// ScopeFiles count files.
	Shown, Total, ShownFiles, ScopeFiles int
	// Refresh is what the refresh before rendering did.
	Refresh RefreshStats
}

// Map refreshes the map and renders the best-ranked definitions in scope
// that fit the budget.
func (m *Mapper) Map(ctx context.Context, req Request) (Result, error) {
	scope := filepath.ToSlash(filepath.Clean(req.Scope))
	if scope == "." || scope == "/" {
		scope = ""
	}
	if scope == ".." || strings.HasPrefix(scope, "../") || path.IsAbs(scope) {
		return Result{}, fmt.Errorf("%w: %s", ErrOutside, req.Scope)
	}
	budget := req.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	m.mu.Lock()
	var st RefreshStats
	var err error
	if !m.warm.IsZero() && time.Since(m.warm) < prewarmFresh {
		st = m.warmStats
	} else {
		st, err = m.refreshLocked(ctx)
	}
	m.warm = time.Time{}
	m.maps++
	if err != nil {
		m.mu.Unlock()
		return Result{Refresh: st}, err
	}
	focus := map[string]bool{}
	for _, f := range req.Focus {
		focus[f] = true
	}
	inScope := func(p string) bool { return scope == "" || p == scope || strings.HasPrefix(p, scope+"/") }
	focusFiles := map[string]bool{}
	scopeFiles := 0
	for p := range m.files {
		if inScope(p) {
			scopeFiles++
			if scope != "" {
				focusFiles[p] = true
			}
		}
	}
	all := rank(m.files, focus, focusFiles)
	m.mu.Unlock()

	var cands []ranked
	for _, r := range all {
		if inScope(r.file) {
			cands = append(cands, r)
		}
	}
	res := Result{Total: len(cands), ScopeFiles: scopeFiles, Refresh: st}
	fits := func(n int) (string, int, bool) {
		text, files := render(cands[:n], len(cands), scopeFiles, st)
		t := int(llm.EstimateTokens(text))
		return text, files, t <= budget
	}
	// The rendered size grows with n, so the largest n that fits is found
	// by bisection.
	lo, hi := 0, len(cands)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	res.Text, res.ShownFiles, _ = fits(lo)
	res.Shown = lo
	res.Tokens = int(llm.EstimateTokens(res.Text))
	return res, nil
}

// render prints defs grouped by file, files in the order of their best
// definition, definitions in line order.
func render(defs []ranked, total, scopeFiles int, st RefreshStats) (string, int) {
	byFile := map[string][]Symbol{}
	var order []string
	for _, d := range defs {
		if _, ok := byFile[d.file]; !ok {
			order = append(order, d.file)
		}
		byFile[d.file] = append(byFile[d.file], d.sym)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Repo map: %d of %d definitions in %d of %d files, most referenced first.", len(defs), total, len(order), scopeFiles)
	if st.Truncated {
		b.WriteString(" (The tree has more source files than are mapped.)")
	}
	if st.Unsupported > 0 {
		fmt.Fprintf(&b, " (%d files of languages this build cannot parse are left out.)", st.Unsupported)
	}
	b.WriteString("\n")
	for _, f := range order {
		syms := byFile[f]
		sort.SliceStable(syms, func(i, j int) bool { return syms[i].Line < syms[j].Line })
		b.WriteString(f)
		b.WriteString("\n")
		for _, s := range syms {
			fmt.Fprintf(&b, "  %d ", s.Line)
			if s.Parent != "" && !strings.Contains(s.Sig, s.Parent) {
				b.WriteString(s.Parent)
				b.WriteString(": ")
			}
			sig := s.Sig
			if sig == "" {
				sig = s.Kind + " " + s.Name
			}
			b.WriteString(sig)
			b.WriteString("\n")
		}
	}
	return b.String(), len(order)
}
