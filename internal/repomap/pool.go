package repomap

import (
	"path/filepath"
	"sync"
)

// Pool hands out one Mapper per root, so that every tool call and agent of
// a process shares the parses of a tree. It is safe for concurrent use.
type Pool struct {
	opts Options
	mu   sync.Mutex
	m    map[string]*Mapper
}

// NewPool returns a Pool whose Mappers use opts (one cache file per root in
// opts.CacheDir).
func NewPool(opts Options) *Pool { return &Pool{opts: opts, m: map[string]*Mapper{}} }

// For returns the Mapper of root, creating it on first use.
func (p *Pool) For(root string) *Mapper {
	root = filepath.Clean(root)
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.m[root]
	if !ok {
		m = New(root, p.opts)
		p.m[root] = m
	}
	return m
}

// Close closes every Mapper of the pool.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.m {
		m.Close()
	}
	p.m = map[string]*Mapper{}
}
