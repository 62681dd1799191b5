package store

import (
	"context"
	"slices"
	"sync"
)

// writeGate orders the writers of one process on its single SQLite writer
// connection: first come, first served, except that an urgent write (a
// cluster member's heartbeat) goes ahead of every queued one. Without it
// database/sql hands the connection to a random waiter, so with a few
// thousand session writes queued (a worker running 1,000 turns at once)
// a heartbeat waited longer than the members' TTL and the node was
// dropped from its cluster while alive; and a turn's writes could be
// overtaken by later ones indefinitely.
type writeGate struct {
	mu     sync.Mutex
	busy   bool
	urgent []chan struct{}
	normal []chan struct{}
}

// urgentKey marks a context whose writes go ahead of the queue.
type urgentKey struct{}

// urgent returns ctx with its writes marked urgent.
func urgent(ctx context.Context) context.Context { return context.WithValue(ctx, urgentKey{}, true) }

// lock waits for the connection; an error (ctx ended) means the caller
// does not hold it.
func (g *writeGate) lock(ctx context.Context) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	isUrgent := ctx.Value(urgentKey{}) != nil
	if isUrgent {
		g.urgent = append(g.urgent, ch)
	} else {
		g.normal = append(g.normal, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	q := &g.normal
	if isUrgent {
		q = &g.urgent
	}
	if i := slices.Index(*q, ch); i >= 0 {
		*q = slices.Delete(*q, i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	// Handed the connection as ctx ended: pass it on.
	g.mu.Unlock()
	g.unlock()
	return ctx.Err()
}

// unlock hands the connection to the next waiter, urgent ones first.
func (g *writeGate) unlock() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next chan struct{}
	switch {
	case len(g.urgent) > 0:
		next, g.urgent = g.urgent[0], g.urgent[1:]
	case len(g.normal) > 0:
		next, g.normal = g.normal[0], g.normal[1:]
	default:
		g.busy = false
		return
	}
	close(next)
}
