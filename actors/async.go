package actors

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// asyncPanic reports a panic recovered in work started by runAsync. The
// receiving actor re-raises it inside Receive so that its supervisor sees
// the failure.
type asyncPanic struct {
	value any
	stack string
}

func (p *asyncPanic) String() string { return fmt.Sprintf("panic: %v", p.value) }

// runAsync runs work off the mailbox: fn runs in its own goroutine with ctx,
// and whatever it returns is sent to the actor as a message. A panic in fn
// arrives as *asyncPanic instead. It must be called from inside Receive
// (it captures the actor's PID and system); fn must not touch the actor.
func runAsync(c actor.Context, ctx context.Context, fn func(ctx context.Context) any) {
	system, self := c.ActorSystem(), c.Self()
	go func() {
		var msg any
		func() {
			defer func() {
				if p := recover(); p != nil {
					msg = &asyncPanic{value: p, stack: string(debug.Stack())}
				}
			}()
			msg = fn(ctx)
		}()
		if msg != nil {
			system.Root.Send(self, msg)
		}
	}()
}

// asyncDone carries the continuation of work done off the mailbox back
// into Receive, where it runs only if its turn is still live.
type asyncDone struct {
	turn int
	then func(actor.Context)
}

// offMailbox runs work (disk I/O: diffs, hashing, plan and checkpoint
// writes) in its own goroutine and then runs then(c, result) back inside
// Receive, as an *asyncDone for turn. bg, when not nil, counts the work in
// flight so that closing a session can wait for writes already started.
func offMailbox[R any](c actor.Context, ctx context.Context, turn int, bg *sync.WaitGroup, work func(context.Context) R, then func(actor.Context, R)) {
	if bg != nil {
		bg.Add(1)
	}
	runAsync(c, ctx, func(ctx context.Context) any {
		if bg != nil {
			defer bg.Done()
		}
		r := work(ctx)
		return &asyncDone{turn: turn, then: func(c actor.Context) { then(c, r) }}
	})
}
