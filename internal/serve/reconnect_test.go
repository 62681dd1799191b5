package serve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// linkSession is a session as a cluster front holds it: a link to work
// that runs elsewhere, which Close only detaches.
type linkSession struct {
	id     string
	bus    *events.Bus
	mu     sync.Mutex
	closed bool
}

func (s *linkSession) ID() string { return s.id }
func (s *linkSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return messages.UserMessage{ID: "m", Body: body, Mode: mode}
}
func (s *linkSession) Cancel(string)                         {}
func (s *linkSession) Bus() *events.Bus                      { return s.bus }
func (s *linkSession) Answer(string, policy.Decision) error  { return nil }
func (s *linkSession) Pending() []messages.ApprovalRequested { return nil }
func (s *linkSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *linkSession) Remove(context.Context, string) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *linkSession) Close(context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// linkOpener opens linkSessions and records what Reopen was given.
type linkOpener struct {
	mu       sync.Mutex
	reopened map[string]Session // id -> the old session Reopen got
	made     map[string]*linkSession
}

func (o *linkOpener) open(id string) *linkSession {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := &linkSession{id: id, bus: events.New(id, nil)}
	o.made[id] = s
	return s
}
func (o *linkOpener) New(ctx context.Context, project string) (Session, error) {
	return o.open("new-" + time.Now().Format("150405.000000000")), nil
}
func (o *linkOpener) Load(ctx context.Context, id, project string) (Session, error) {
	return o.open(id), nil
}
func (o *linkOpener) Reopen(ctx context.Context, old Session, id, project string) (Session, error) {
	o.mu.Lock()
	o.reopened[id] = old
	o.mu.Unlock()
	return o.open(id), nil
}
func (o *linkOpener) Stored(context.Context, string) (string, error) { return "", ErrNotFound }
func (o *linkOpener) Export(context.Context, string, string, string, io.Writer) error {
	return nil
}
func (o *linkOpener) Undo(context.Context, string) (string, error) { return "", nil }

// TestReconnectKeepsStreamsAndHoldsRequests: while rejoin runs, a request
// that needs a session waits, and one whose wait runs out is answered
// 503 with Retry-After; after it, a running session is reopened through
// Reopen from its old session, and its events reach the same hub (so an
// open event stream goes on); a passivated one is left for its next
// request.
func TestReconnectKeepsStreamsAndHoldsRequests(t *testing.T) {
	o := &linkOpener{reopened: map[string]Session{}, made: map[string]*linkSession{}}
	m := &manager{open: o, bufSize: 64, log: slog.New(slog.DiscardHandler), now: time.Now, sessions: map[string]*entry{}}
	running, err := m.create(t.Context(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	first := running.sess.(*linkSession)
	first.bus.Publish(messages.Notice{Text: "before"})
	dormant := &entry{id: "dormant", project: "/p", hub: newHub(64)}
	m.sessions[dormant.id] = dormant

	inRejoin := make(chan struct{})
	finish := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- m.reconnect(func() error {
			close(inRejoin)
			<-finish
			return nil
		})
	}()
	<-inRejoin
	if !first.closed {
		t.Error("the running session was not detached before rejoin")
	}
	// A request whose wait runs out: 503, Retry-After.
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	_, err = m.create(short, "/p")
	cancel()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("create during the rejoin: %v, want ErrUnavailable", err)
	}
	rec := httptest.NewRecorder()
	writeError(rec, statusOf(err), err)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("answered %d with Retry-After %q, want 503 with one", rec.Code, rec.Header().Get("Retry-After"))
	}
	// A request that waits gets its session once the rejoin is done.
	waited := make(chan error, 1)
	go func() {
		dormant.mu.Lock()
		defer dormant.mu.Unlock()
		_, err := m.running(t.Context(), dormant)
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("a restore went ahead during the rejoin (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the restore that waited: %v", err)
	}

	if o.reopened[running.id] != Session(first) {
		t.Fatalf("Reopen got %v for the running session, want its old session", o.reopened[running.id])
	}
	if _, ok := o.reopened[dormant.id]; ok {
		t.Error("the passivated session was reopened by the reconnect, not by its request")
	}
	running.mu.Lock()
	second, _ := running.sess.(*linkSession)
	running.mu.Unlock()
	if second == nil || second == first {
		t.Fatal("the running session was not replaced")
	}
	before := running.hub.last()
	second.bus.Publish(messages.Notice{Text: "after"})
	for deadline := time.Now().Add(10 * time.Second); running.hub.last() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the reopened session's events never reached the hub")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReconnectFailedLeavesSessionsToTheirRequests: when rejoin fails,
// the detached sessions stay passivated and the gate opens.
func TestReconnectFailedLeavesSessionsToTheirRequests(t *testing.T) {
	o := &linkOpener{reopened: map[string]Session{}, made: map[string]*linkSession{}}
	m := &manager{open: o, bufSize: 64, log: slog.New(slog.DiscardHandler), now: time.Now, sessions: map[string]*entry{}}
	e, err := m.create(t.Context(), "/p")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("no store")
	if err := (&Server{m: m}).Reconnect(func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("reconnect: %v, want %v", err, boom)
	}
	if e.sess != nil || len(o.reopened) != 0 {
		t.Error("a session was reopened after a failed rejoin")
	}
	if err := m.waitRejoin(t.Context()); err != nil {
		t.Errorf("the gate stayed shut after a failed rejoin: %v", err)
	}
}
