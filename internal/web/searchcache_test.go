package web

import (
	"context"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
)

type countingSearcher struct{ calls map[string]int }

func (s *countingSearcher) Search(_ context.Context, q string, n int) ([]SearchHit, error) {
	s.calls[q]++
	return []SearchHit{{Title: q, URL: "https://example.com/" + q}}, nil
}

func TestCachedSearcherTTLs(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	inner := &countingSearcher{calls: map[string]int{}}
	c := &CachedSearcher{Searcher: inner, Cache: NewMemoryCache(0), Now: func() time.Time { return now }}
	ctx := context.Background()
	search := func(q string) {
		t.Helper()
		hits, err := c.Search(ctx, q, 5)
		if err != nil || len(hits) != 1 {
			t.Fatalf("Search(%q) = %v, %v", q, hits, err)
		}
	}
	search("go generics")
	search("Go  GENERICS") // same query: cached
	search("CVE-2024-1234 openssl")
	if inner.calls["go generics"] != 1 || inner.calls["Go  GENERICS"] != 0 {
		t.Fatalf("calls = %v, want the second query from the cache", inner.calls)
	}
	now = now.Add(2 * time.Hour) // past the security TTL (1h), within the general (24h)
	search("go generics")
	search("CVE-2024-1234 openssl")
	if inner.calls["go generics"] != 1 || inner.calls["CVE-2024-1234 openssl"] != 2 {
		t.Errorf("after 2h: calls = %v, want general cached and security refetched", inner.calls)
	}
	now = now.Add(23 * time.Hour)
	search("go generics")
	if inner.calls["go generics"] != 2 {
		t.Errorf("after 25h: calls = %v, want the general query refetched", inner.calls)
	}
	c.TTL = config.ResearchTTL{General: 100 * time.Hour}
	search("go generics")
	if inner.calls["go generics"] != 2 {
		t.Errorf("web.research_ttl.general is not honoured: %v", inner.calls)
	}
}
