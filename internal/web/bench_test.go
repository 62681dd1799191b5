package web

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/odin-code/odin/config"
)

// BenchmarkHTMLToMarkdown measures main-content extraction and conversion
// of the fixture docs page, repeated to a ~100 KB page.
func BenchmarkHTMLToMarkdown(b *testing.B) {
	a, err := txtar.ParseFile(filepath.Join("testdata", "sites", "docs.txtar"))
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
	conv := newConverter()
	u := mustURL(b, "https://docs.example.org/guide/install.html")
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := htmlToMarkdown(b.Context(), conv, doc, u); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetchCached measures a fetch served from the memory cache.
func BenchmarkFetchCached(b *testing.B) {
	f, err := NewFetcher(config.Web{CacheTTL: DefaultCacheTTL})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	p := &Page{URL: "https://docs.example.org/x", FinalURL: "https://docs.example.org/x", Status: 200, Kind: KindHTML, Content: strings.Repeat("text ", 20_000), FetchedAt: f.now()}
	if err := f.cache.Put(b.Context(), "webfetch:"+p.URL, mustJSON(b, p), p.FetchedAt); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := f.Fetch(b.Context(), p.URL)
		if err != nil || !got.Cached {
			b.Fatalf("not served from cache: %v", err)
		}
	}
}
