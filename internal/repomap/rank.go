package repomap

import (
	"go/ast"
	"math"
	"path"
	"sort"
	"strings"
)

// PageRank parameters: the usual damping, and enough iterations for the
// ranks of a few thousand files to settle well below the differences the
// map's order depends on.
const (
	damping    = 0.85
	iterations = 50
	tolerance  = 1e-9
)

// ranked is a definition with its score.
type ranked struct {
	file  string
	sym   Symbol
	score float64
}

// edge is one name's contribution to the link from a file that uses it to
// a file that defines it.
type edge struct {
	from, to int
	name     string
	bare     bool // a use without a dot in Go: never a method's
	w        float64
}

// rank scores every definition in files. focus names get more weight, and
// focusFiles (when any) are where the random surfer restarts, so that the
// ranking leans towards what they use. The result is best first.
func rank(files map[string]*fileData, focus map[string]bool, focusFiles map[string]bool) []ranked {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	index := make(map[string]int, len(paths))
	for i, p := range paths {
		index[p] = i
	}
	// Who can a use refer to? In general any definition of the name in a
	// file of the same language family. Go is precise about it: a bare name
	// is a definition of its own package (a directory), never a method; a
	// name after a dot is a method or field, or when exported a member of
	// any package; a name qualified by an imported package is a member of
	// a package of that name (a directory of that name in the tree).
	type nameKey struct{ scope, name string }
	definers := map[nameKey][]int{}
	add := func(k nameKey, i int) {
		if ds := definers[k]; len(ds) == 0 || ds[len(ds)-1] != i {
			definers[k] = append(ds, i)
		}
	}
	for i, p := range paths {
		fd := files[p]
		fam := family(fd.Lang)
		for _, d := range fd.Defs {
			add(nameKey{fam, d.Name}, i)
			if fd.Lang == "go" {
				add(nameKey{"go:" + path.Dir(p), d.Name}, i)
				if d.Kind != "method" {
					add(nameKey{"go-plain:" + path.Dir(p), d.Name}, i)
					add(nameKey{"go-pkg:" + path.Base(path.Dir(p)), d.Name}, i)
				}
			}
		}
	}
	// out is each file's total weight of uses, which its rank is shared
	// by among the definitions it uses; outLinks leaves out its uses of
	// its own definitions, which are no link in the graph (a self-loop
	// would make a file that mostly uses itself a sink of rank).
	var edges []edge
	out := make([]float64, len(paths))
	outLinks := make([]float64, len(paths))
	for i, p := range paths {
		fd := files[p]
		fam, dir := family(fd.Lang), path.Dir(p)
		from := 1.0
		if isTest(p) {
			from = 0.3 // tests use everything; production code says more
		}
		for ref, n := range fd.Refs {
			name, bare := ref, false
			var ds []int
			switch {
			case fd.Lang != "go":
				ds = definers[nameKey{fam, name}]
			case strings.IndexByte(ref, '.') > 0:
				pkg, n, _ := strings.Cut(ref, ".")
				name = n
				ds = definers[nameKey{"go-pkg:" + pkg, name}]
			case strings.HasPrefix(ref, "."):
				name = ref[1:]
				if ast.IsExported(name) {
					ds = definers[nameKey{fam, name}]
				} else {
					ds = definers[nameKey{"go:" + dir, name}]
				}
			default:
				ds, bare = definers[nameKey{"go-plain:" + dir, name}], true
			}
			if len(ds) == 0 {
				continue
			}
			w := from * nameWeight(name, len(ds), focus) * math.Sqrt(float64(n)) / float64(len(ds))
			for _, d := range ds {
				ew := w
				if d == i {
					// Using your own definitions says less about them
					// than being used from elsewhere.
					ew *= 0.25
				}
				edges = append(edges, edge{from: i, to: d, name: name, bare: bare, w: ew})
				out[i] += ew
				if d != i {
					outLinks[i] += ew
				}
			}
		}
	}
	pr := pagerank(len(paths), edges, outLinks, personalization(paths, focusFiles))

	// A definition's score is the rank flowing to it over the edges of its
	// name (shared by the file's definitions of that name), plus a trace of
	// its file's own rank so that definitions nobody references still come
	// in their file's order.
	type key struct {
		file int
		name string
		bare bool
	}
	flow := map[key]float64{}
	for _, e := range edges {
		flow[key{e.to, e.name, e.bare}] += pr[e.from] * e.w / out[e.from]
	}
	var res []ranked
	for i, p := range paths {
		test := isTest(p)
		count, countPlain := map[string]int{}, map[string]int{}
		for _, d := range files[p].Defs {
			count[d.Name]++
			if d.Kind != "method" {
				countPlain[d.Name]++
			}
		}
		for _, d := range files[p].Defs {
			s := flow[key{i, d.Name, false}]/float64(count[d.Name]) + pr[i]*1e-3
			if d.Kind != "method" {
				s += flow[key{i, d.Name, true}] / float64(countPlain[d.Name])
			}
			if test {
				s *= 0.05
			}
			if focus[d.Name] {
				// Scores are shares of a rank that sums to one: what the
				// caller names comes before everything else.
				s++
			}
			res = append(res, ranked{file: p, sym: d, score: s})
		}
	}
	sort.SliceStable(res, func(a, b int) bool {
		if res[a].score != res[b].score {
			return res[a].score > res[b].score
		}
		if res[a].file != res[b].file {
			return res[a].file < res[b].file
		}
		return res[a].sym.Line < res[b].sym.Line
	})
	return res
}

// nameWeight is how much one use of name links its user to its definers.
func nameWeight(name string, definers int, focus map[string]bool) float64 {
	w := 1.0
	if focus[name] {
		w *= 10
	}
	if strings.HasPrefix(name, "_") {
		w *= 0.1 // private by convention (Python, JS)
	}
	if definers > 5 {
		w *= 0.1 // a generic name (String, Close, __init__): says little
	}
	if len(name) < 3 {
		w *= 0.5
	}
	return w
}

func personalization(paths []string, focusFiles map[string]bool) []float64 {
	p := make([]float64, len(paths))
	n := 0
	for i, path := range paths {
		if focusFiles[path] {
			p[i] = 1
			n++
		}
	}
	if n == 0 {
		for i := range p {
			p[i] = 1
		}
		n = len(p)
	}
	for i := range p {
		p[i] /= float64(n)
	}
	return p
}

// pagerank runs the power iteration with personalization pers; the rank of
// files that link nowhere is redistributed by pers too.
func pagerank(n int, edges []edge, out, pers []float64) []float64 {
	pr := make([]float64, n)
	if n == 0 {
		return pr
	}
	copy(pr, pers)
	next := make([]float64, n)
	for range iterations {
		dangling := 0.0
		for i := range n {
			if out[i] == 0 {
				dangling += pr[i]
			}
		}
		for i := range next {
			next[i] = (1-damping)*pers[i] + damping*dangling*pers[i]
		}
		for _, e := range edges {
			if e.from != e.to {
				next[e.to] += damping * pr[e.from] * e.w / out[e.from]
			}
		}
		diff := 0.0
		for i := range pr {
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < tolerance {
			break
		}
	}
	return pr
}

// family groups languages whose files refer to each other's names.
func family(lang string) string {
	switch lang {
	case "javascript", "typescript", "tsx":
		return "js"
	}
	return lang
}
