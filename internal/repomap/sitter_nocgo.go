//go:build !cgo || no_treesitter

package repomap

// Without cgo the tree-sitter grammars cannot be linked: only Go is mapped
// (with go/parser), and the map counts the other source files as
// unsupported.
type languages struct{}

func newLanguages() *languages { return &languages{} }

func (*languages) supports(lang string) bool { return lang == "go" }

func (*languages) close() {}

func (*languages) parse(_ string, src []byte) ([]Symbol, map[string]int, error) {
	return parseGo(src)
}
