package store

import (
	"context"
	"sync"
	"time"
)

// Grouped is an SQLite store whose batches from many goroutines share
// transactions (group commit). A server with hundreds of sessions has a
// journal per session, each committing its own batches, and they all queue
// on the process's one writer connection; grouped, the batches waiting at
// that moment are written in one transaction, one commit and one
// hand-over of the connection instead of one each.
//
// Each batch keeps Batch's contract: it runs in its own savepoint, so one
// that fails is undone alone and gets its own error, and it returns only
// once its fate is known. A failed commit (or a group that ran past its
// deadline) fails every batch of the group, none of which is then stored.
// A batch runs on whichever caller's goroutine leads the group, with its
// own context's values but the group's deadline: a caller's deadline
// cannot cut its batch short without undoing the others' too. Other
// methods are SQLite's. Safe for concurrent use.
type Grouped struct {
	*SQLite

	mu      sync.Mutex
	waiting []*groupCall
	leading bool // a goroutine is writing a group, and will hand on
	groups  int  // transactions written, for tests
}

// groupCall is one caller's batch waiting for its group.
type groupCall struct {
	ctx  context.Context
	fn   func(context.Context) error
	err  error
	done chan struct{}
}

// Limits of a group: how many batches share a transaction, and how long
// the transaction may take when no caller set a deadline.
const (
	groupMax      = 128
	groupDeadline = time.Minute
)

// NewGrouped returns s with grouped batches.
func NewGrouped(s *SQLite) *Grouped { return &Grouped{SQLite: s} }

// Batch runs fn as part of the next group transaction; inside a batch it
// is a savepoint of that batch, as with SQLite.Batch.
func (g *Grouped) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, nested := ctx.Value(batchKey{}).(*wtx); nested {
		return g.SQLite.Batch(ctx, fn)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &groupCall{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, c)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if lead {
		// Nobody was writing, so nothing waited before c: the group
		// written now holds it.
		g.lead()
	}
	<-c.done
	return c.err
}

// lead writes the waiting batches (at most groupMax) in one transaction,
// then hands on to a new goroutine if more arrived meanwhile: the caller
// who led returns as soon as its own batch is done.
func (g *Grouped) lead() {
	g.mu.Lock()
	n := min(len(g.waiting), groupMax)
	calls := g.waiting[:n:n]
	g.waiting = append([]*groupCall(nil), g.waiting[n:]...)
	g.mu.Unlock()
	g.commit(calls)
	g.mu.Lock()
	g.groups++
	more := len(g.waiting) > 0
	g.leading = more
	g.mu.Unlock()
	if more {
		go g.lead()
	}
}

// commit writes calls in one transaction, each in its own savepoint, and
// tells every caller its outcome.
func (g *Grouped) commit(calls []*groupCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	var deadline time.Time
	for _, c := range calls {
		d, ok := c.ctx.Deadline()
		if !ok {
			d = time.Now().Add(groupDeadline)
		}
		if d.After(deadline) {
			deadline = d
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	err := g.SQLite.Batch(ctx, func(tctx context.Context) error {
		for _, c := range calls {
			c.err = g.SQLite.Batch(callContext{Context: tctx, call: c.ctx}, c.fn)
		}
		return nil
	})
	if err != nil {
		// Nothing of the group is stored.
		for _, c := range calls {
			if c.err == nil {
				c.err = err
			}
		}
	}
}

// callContext is the group transaction's context (its deadline and its
// transaction) that also carries the values of one caller's context.
type callContext struct {
	context.Context
	call context.Context
}

func (c callContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.call.Value(key)
}
