package events

import (
	"context"
	"sync"
	"time"

	"github.com/odin-code/odin/messages"
)

// Bus broadcasts a session's events. It is safe for concurrent use, and
// Publish never blocks: each subscriber has its own queue.
type Bus struct {
	session string
	now     func() time.Time

	mu   sync.RWMutex
	subs map[*subscriber]struct{}
}

// subscriber is one Subscribe call. A lossy subscriber is fed straight into
// its buffered channel, dropping what does not fit. A lossless one gets a
// pending queue that Publish appends to and a pump goroutine that moves
// the queue into the channel at the subscriber's pace; when the queue
// passes limit, the backlog is collapsed (collapse) rather than grown
// without bound or waited for.
type subscriber struct {
	ch       chan messages.Envelope
	lossless bool
	limit    int
	done     chan struct{}

	mu      sync.Mutex
	pending []messages.Envelope
	wake    chan struct{}
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

// Publish sends ev to every subscriber without waiting for any: lossy
// subscribers whose buffer is full miss it; lossless ones queue it.
func (b *Bus) Publish(ev messages.Event) {
	if b == nil {
		return
	}
	// The read lock is held while sending so that a lossy subscriber's
	// channel cannot be closed under a send.
	b.mu.RLock()
	defer b.mu.RUnlock()
	env := messages.Envelope{Session: b.session, Time: b.now(), Event: ev}
	for s := range b.subs {
		if s.lossless {
			s.push(env)
			continue
		}
		select {
		case s.ch <- env:
		default:
		}
	}
}

// backlogFactor sizes a lossless subscriber's queue: this many times its
// channel buffer, and at least minBacklog events.
const (
	backlogFactor = 4
	minBacklog    = 64
)

// Subscribe returns a channel of events until ctx ends, when the channel is
// closed. A lossy subscriber has a buffer of size events and misses what
// does not fit. A lossless one misses nothing while it keeps up; if it
// falls more than a backlog behind (a stalled terminal), the streamed and
// progress events of its backlog are discarded and a messages.Resync with
// their number takes their place, so the subscriber knows to re-read the
// session's state; turn, input and approval events are always delivered.
func (b *Bus) Subscribe(ctx context.Context, size int, lossless bool) <-chan messages.Envelope {
	s := &subscriber{ch: make(chan messages.Envelope, size), lossless: lossless, done: make(chan struct{}),
		limit: max(size*backlogFactor, minBacklog), wake: make(chan struct{}, 1)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	if lossless {
		go s.pump()
	}
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		delete(b.subs, s)
		close(s.done)
		if !lossless {
			close(s.ch)
		}
		b.mu.Unlock()
	}()
	return s.ch
}

// push queues env for a lossless subscriber.
func (s *subscriber) push(env messages.Envelope) {
	s.mu.Lock()
	s.pending = append(s.pending, env)
	if len(s.pending) > s.limit {
		s.pending = collapse(s.pending)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// pump delivers a lossless subscriber's queue in order; it is the only
// sender on s.ch and closes it when the subscription ends.
func (s *subscriber) pump() {
	defer close(s.ch)
	for {
		select {
		case <-s.wake:
		case <-s.done:
			return
		}
		for {
			s.mu.Lock()
			if len(s.pending) == 0 {
				s.mu.Unlock()
				break
			}
			env := s.pending[0]
			s.pending[0] = messages.Envelope{}
			s.pending = s.pending[1:]
			s.mu.Unlock()
			select {
			case s.ch <- env:
			case <-s.done:
				return
			}
		}
	}
}

// collapse discards the events of a backlog a subscriber can do without
// and puts one Resync, counting them (and any earlier Resync still
// queued), where the first of them was. Kept events keep their order.
func collapse(q []messages.Envelope) []messages.Envelope {
	out := make([]messages.Envelope, 0, len(q)/2+1)
	resync, dropped := -1, 0
	for _, env := range q {
		if r, ok := env.Event.(messages.Resync); ok {
			dropped += r.Dropped
		} else if essential(env.Event) {
			out = append(out, env)
			continue
		} else {
			dropped++
		}
		if resync < 0 {
			resync = len(out)
			out = append(out, env) // placeholder, replaced below
		}
	}
	if resync >= 0 {
		out[resync].Event = messages.Resync{Dropped: dropped}
	}
	return out
}

// essential events are never discarded: a front end cannot recover them
// from the session's state without also knowing they happened. Above all
// the terminal ones: `odin run`, ACP and the web viewer wait for the end
// of a turn (TurnFinished) or of the session (SessionFenced), and a
// collapsed end leaves them waiting forever. The others: a turn started,
// an input was queued or removed, an approval waits or was answered.
func essential(ev messages.Event) bool {
	switch ev.(type) {
	case messages.TurnFinished, messages.SessionFenced:
		return true
	case messages.TurnStarted, messages.InputQueued, messages.InputRemoved,
		messages.ApprovalRequested, messages.ApprovalResolved,
		messages.ElicitationRequested, messages.ElicitationResolved:
		return true
	}
	return false
}
