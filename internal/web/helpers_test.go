package web

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web/webtest"
)

// fakeClock is a settable clock for cache expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newSite(t *testing.T, name string, vars map[string]string) *webtest.Site {
	t.Helper()
	return webtest.NewSite(t, filepath.Join("testdata", "sites", name+".txtar"), vars)
}

func newFetcher(t *testing.T, cfg config.Web, opts ...Option) *Fetcher {
	t.Helper()
	f, err := NewFetcher(cfg, opts...)
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
