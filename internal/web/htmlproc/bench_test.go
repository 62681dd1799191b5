package htmlproc

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// BenchmarkHTMLToMarkdown measures main-content extraction and conversion
// of the fixture docs page, repeated to a ~100 KB page.
func BenchmarkHTMLToMarkdown(b *testing.B) {
	a, err := txtar.ParseFile(filepath.Join("..", "testdata", "sites", "docs.txtar"))
	if err != nil {
		b.Fatal(err)
	}
	var page string
	for _, f := range a.Files {
		if f.Name == "/guide/install.html" {
			page = string(f.Data)
		}
	}
	start, end := strings.Index(page, "<main>"), strings.Index(page, "</main>")
	doc := page[:end] + strings.Repeat(page[start+len("<main>"):end], 60) + page[end:]
	u, err := url.Parse("https://docs.example.org/guide/install.html")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := htmlToMarkdown(b.Context(), conv, doc, u); err != nil {
			b.Fatal(err)
		}
	}
}
