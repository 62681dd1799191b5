package web

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMemoryCache(t *testing.T) {
	ctx := t.Context()
	c := NewMemoryCache(2)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, _, ok, err := c.Get(ctx, "a"); ok || err != nil {
		t.Fatalf("empty cache: ok %v err %v", ok, err)
	}
	value := []byte("page a")
	if err := c.Put(ctx, "a", value, t0); err != nil {
		t.Fatal(err)
	}
	value[0] = 'X' // the cache keeps its own copy
	got, at, ok, err := c.Get(ctx, "a")
	if err != nil || !ok || string(got) != "page a" || !at.Equal(t0) {
		t.Fatalf("Get(a) = %q %v %v %v", got, at, ok, err)
	}
	_ = c.Put(ctx, "b", []byte("b"), t0.Add(time.Minute))
	_ = c.Put(ctx, "c", []byte("c"), t0.Add(2*time.Minute)) // evicts a, the oldest
	var keys []string
	for _, k := range []string{"a", "b", "c"} {
		if _, _, ok, _ := c.Get(ctx, k); ok {
			keys = append(keys, k)
		}
	}
	if diff := cmp.Diff([]string{"b", "c"}, keys); diff != "" || c.Len() != 2 {
		t.Errorf("after eviction (-want +got):\n%s len %d", diff, c.Len())
	}
}

// fakeStore has the store's method names, as StoreCache expects.
type fakeStore struct {
	m   map[string][]byte
	at  map[string]time.Time
	err error
}

func (s *fakeStore) CacheGet(_ context.Context, key string) ([]byte, time.Time, bool, error) {
	if s.err != nil {
		return nil, time.Time{}, false, s.err
	}
	v, ok := s.m[key]
	return v, s.at[key], ok, nil
}

func (s *fakeStore) CachePut(_ context.Context, key string, value []byte, at time.Time) error {
	if s.err != nil {
		return s.err
	}
	s.m[key], s.at[key] = value, at
	return nil
}

func TestStoreCacheAdapter(t *testing.T) {
	st := &fakeStore{m: map[string][]byte{}, at: map[string]time.Time{}}
	var c Cache = StoreCache{S: st}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := c.Put(t.Context(), "k", []byte("v"), t0); err != nil {
		t.Fatal(err)
	}
	v, at, ok, err := c.Get(t.Context(), "k")
	if string(v) != "v" || !at.Equal(t0) || !ok || err != nil {
		t.Errorf("Get = %q %v %v %v", v, at, ok, err)
	}
	st.err = fmt.Errorf("disk full")
	if _, _, _, err := c.Get(t.Context(), "k"); err == nil {
		t.Error("store error swallowed by the adapter")
	}
}
