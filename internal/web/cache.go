package web

import (
	"context"
	"sync"
	"time"
)

// Cache stores converted pages by key. Freshness is the caller's decision:
// Get returns the entry with the time it was stored and the Fetcher
// compares that against the TTL that applies to the current request, so
// one entry can serve a 15-minute WebFetch and a 7-day documentation
// lookup alike. Implementations must be safe for concurrent use.
type Cache interface {
	// Get returns the value stored under key and when it was stored; ok is
	// false when there is none.
	Get(ctx context.Context, key string) (value []byte, storedAt time.Time, ok bool, err error)
	// Put stores value under key, replacing any previous entry.
	Put(ctx context.Context, key string, value []byte, at time.Time) error
}

// StoreCache adapts the session store (internal/store), whose cache
// methods carry a Cache prefix, to Cache.
type StoreCache struct {
	S interface {
		CacheGet(ctx context.Context, key string) ([]byte, time.Time, bool, error)
		CachePut(ctx context.Context, key string, value []byte, at time.Time) error
	}
}

// Get implements Cache.
func (c StoreCache) Get(ctx context.Context, key string) ([]byte, time.Time, bool, error) {
	return c.S.CacheGet(ctx, key)
}

// Put implements Cache.
func (c StoreCache) Put(ctx context.Context, key string, value []byte, at time.Time) error {
	return c.S.CachePut(ctx, key, value, at)
}

// MemoryCache is a Cache in memory, for tests and for runs without a
// store. It holds at most its limit of entries, dropping the oldest stored
// first. It is safe for concurrent use.
type MemoryCache struct {
	mu      sync.Mutex
	limit   int
	entries map[string]memoryEntry
}

type memoryEntry struct {
	value []byte
	at    time.Time
}

// NewMemoryCache returns an empty MemoryCache holding up to limit entries
// (256 when limit <= 0).
func NewMemoryCache(limit int) *MemoryCache {
	if limit <= 0 {
		limit = 256
	}
	return &MemoryCache{limit: limit, entries: map[string]memoryEntry{}}
}

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) ([]byte, time.Time, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, time.Time{}, false, nil
	}
	return append([]byte(nil), e.value...), e.at, true, nil
}

// Put implements Cache.
func (c *MemoryCache) Put(_ context.Context, key string, value []byte, at time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.entries[key]; !exists && len(c.entries) >= c.limit {
		var oldest string
		var oldestAt time.Time
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(oldestAt) {
				oldest, oldestAt = k, e.at
			}
		}
		delete(c.entries, oldest)
	}
	c.entries[key] = memoryEntry{value: append([]byte(nil), value...), at: at}
	return nil
}

// Len is the number of entries.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
