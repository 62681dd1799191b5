package events

import (
	"context"
	"sync"
	"time"

	"github.com/odin-code/odin/messages"
)

// Bus broadcasts a session's events. It is safe for concurrent use.
type Bus struct {
	session string
	now     func() time.Time

	mu   sync.RWMutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	ch       chan messages.Envelope
	lossless bool
	done     chan struct{}
	once     sync.Once
}

// New returns a Bus stamping events with session and the time from now
// (time.Now when nil).
func New(session string, now func() time.Time) *Bus {
	if now == nil {
		now = time.Now
	}
	return &Bus{session: session, now: now, subs: map[*subscriber]struct{}{}}
}

// SetSession changes the session stamped on later events (e.g. after a
// resume picked an existing session).
func (b *Bus) SetSession(id string) {
	b.mu.Lock()
	b.session = id
	b.mu.Unlock()
}

// Publish sends ev to every subscriber. Lossy subscribers whose buffer is
// full miss the event; lossless ones (Subscribe with lossless) are waited
// for until their context ends.
func (b *Bus) Publish(ev messages.Event) {
	if b == nil {
		return
	}
	// The read lock is held while sending so that a subscriber's channel
	// cannot be closed under a send; a blocked lossless send is released
	// by the subscriber's done channel, which is closed before the lock is
	// taken for closing.
	b.mu.RLock()
	defer b.mu.RUnlock()
	env := messages.Envelope{Session: b.session, Time: b.now(), Event: ev}
	for s := range b.subs {
		if s.lossless {
			select {
			case s.ch <- env:
			case <-s.done:
			}
			continue
		}
		select {
		case s.ch <- env:
		default:
		}
	}
}

// Subscribe returns a channel of events until ctx ends, when the channel is
// closed. A lossless subscriber never misses an event (Publish waits for
// it), so it must keep reading; a lossy one has a buffer of size events.
func (b *Bus) Subscribe(ctx context.Context, size int, lossless bool) <-chan messages.Envelope {
	s := &subscriber{ch: make(chan messages.Envelope, size), lossless: lossless, done: make(chan struct{})}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.once.Do(func() { close(s.done) })
		b.mu.Lock()
		delete(b.subs, s)
		close(s.ch)
		b.mu.Unlock()
	}()
	return s.ch
}
