package web

import (
	"strings"
	"testing"

	"github.com/odin-code/odin/config"
)

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
