package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// countingSession records what a grain does with it. Its input ledger
// is its host's, shared by every activation as the store's is.
type countingSession struct {
	idleSession
	host    *recordingHost
	fenced  chan struct{}
	mu      sync.Mutex
	submits []string
	closed  bool
}

// Accept implements serve.Accepter over the host's ledger: an ID taken
// by any activation is a duplicate; a fenced activation takes nothing.
func (s *countingSession) Accept(_ context.Context, key, body string, mode messages.Mode) (messages.UserMessage, string, bool, error) {
	select {
	case <-s.fenced:
		return messages.UserMessage{}, "", false, fmt.Errorf("accept: %w", store.ErrFenced)
	default:
	}
	s.host.mu.Lock()
	_, dup := s.host.ledger[key]
	if !dup {
		s.host.ledger[key] = body
	}
	s.host.mu.Unlock()
	if dup {
		return messages.UserMessage{ID: key, Body: body, Mode: mode}, store.InputAccepted, true, nil
	}
	s.Submit(body, mode)
	return messages.UserMessage{ID: key, Body: body, Mode: mode}, store.InputAccepted, false, nil
}

func (s *countingSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.submits = append(s.submits, body)
	return messages.UserMessage{ID: "m-" + body, Body: body, Mode: mode}
}

func (s *countingSession) Close(context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func (s *countingSession) state() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.submits...), s.closed
}

// recordingHost opens countingSessions at epochs 1, 2, ... and keeps
// them with a way to fence each.
type recordingHost struct {
	mu       sync.Mutex
	sessions []*countingSession
	fence    []chan struct{}
	fail     error
	ledger   map[string]string // input ID → body
	owner    string            // the node of the last claim
}

func (h *recordingHost) Open(_ context.Context, id, node string) (*Hosted, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return nil, h.fail
	}
	if h.ledger == nil {
		h.ledger = map[string]string{}
	}
	f := make(chan struct{})
	s := &countingSession{idleSession: idleSession{id: id, bus: events.New(id, nil)}, host: h, fenced: f}
	h.sessions = append(h.sessions, s)
	h.fence = append(h.fence, f)
	prev := h.owner
	h.owner = node
	return &Hosted{Session: s, Epoch: int64(len(h.sessions)), Fenced: f, Previous: prev}, nil
}

func (h *recordingHost) opened() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *recordingHost) session(i int) (*countingSession, chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[i], h.fence[i]
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSessionGrain drives the grain through one node that is both front
// and host (one remote per test binary: see testCluster): idempotent
// submits, events with sequence and epoch, a fenced activation stopping
// itself and the next request claiming the session again with a resync
// for the subscriber, passivation on idle, and an activation that fails.
func TestSessionGrain(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host := &recordingHost{}
	newBefore, reBefore := activations.Value(ReasonNew), activations.Value(ReasonReactivation)
	n, err := Start(Config{Name: "grain", Store: st, Host: host, TTL: time.Second, Idle: 500 * time.Millisecond, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	// Only the members table drops a member: protoactor's gossip
	// heartbeat must not block a live one that was slow to answer.
	if d := n.Cluster.Config.HeartbeatExpiration; d < 24*time.Hour {
		t.Errorf("gossip heartbeat expiration %s: a busy member would be blocked for good", d)
	}
	ctx := t.Context()
	rs, err := n.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	evs := rs.Bus().Subscribe(ctx, 64, true)

	// The same input ID twice: one submit to the session, a Dup answer.
	in := uuid.NewString()
	a1, err := rs.SubmitInput(ctx, in, "one", "")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := rs.SubmitInput(ctx, in, "one", "")
	if err != nil {
		t.Fatal(err)
	}
	if a1.Dup || !a2.Dup || a1.MessageID != a2.MessageID || a1.Epoch != 1 {
		t.Errorf("accepted %+v then %+v, want the second a dup of the first at epoch 1", a1, a2)
	}
	s1, fence1 := host.session(0)
	if got, _ := s1.state(); len(got) != 1 {
		t.Errorf("the session got %v, want one submit", got)
	}
	// An event of the session reaches the front's bus, typed.
	s1.bus.Publish(messages.TurnFinished{Result: messages.TurnResult{Input: messages.UserMessage{ID: a1.MessageID}, Status: messages.TurnDone}})
	select {
	case env := <-evs:
		if tf, ok := env.Event.(messages.TurnFinished); !ok || tf.Result.Input.ID != a1.MessageID {
			t.Errorf("front got %#v", env.Event)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the event never reached the front")
	}

	// Fenced: the activation closes its session and stops; the
	// subscriber looks the session up again, which claims it at epoch 2,
	// and tells its bus with one resync.
	close(fence1)
	eventually(t, "the fenced session closed", func() bool { _, closed := s1.state(); return closed })
	eventually(t, "a new activation", func() bool { return host.opened() == 2 })
	for resync := false; !resync; {
		select {
		case env := <-evs:
			resync = env.Event.EventType() == "resync"
		case <-time.After(10 * time.Second):
			t.Fatal("no resync after the new activation")
		}
	}
	a3, err := rs.SubmitInput(ctx, uuid.NewString(), "two", "")
	if err != nil || a3.Epoch != 2 {
		t.Fatalf("submit after the fence: %+v %v, want epoch 2", a3, err)
	}
	// The first input again, to the new activation: its ledger (the
	// store's, shared by every activation) knows it, so it does not run
	// twice.
	again, err := rs.SubmitInput(ctx, in, "one", "")
	if err != nil || !again.Dup || again.Epoch != 2 || again.State != store.InputAccepted {
		t.Fatalf("the first input re-sent to the next activation: %+v %v, want a dup in the ledger", again, err)
	}
	s2, _ := host.session(1)
	if got, _ := s2.state(); len(got) != 1 || got[0] != "two" {
		t.Errorf("the second activation ran %q, want only \"two\"", got)
	}

	// A turn in flight keeps the grain active; once it finishes, 500 ms
	// idle passivate it (closed, no new activation until the next
	// request).
	time.Sleep(800 * time.Millisecond)
	if _, closed := s2.state(); closed {
		t.Fatal("a session with a turn in flight was passivated")
	}
	s2.bus.Publish(messages.TurnFinished{Result: messages.TurnResult{Input: messages.UserMessage{ID: a3.MessageID}, Status: messages.TurnDone}})
	eventually(t, "the idle session passivated", func() bool { _, closed := s2.state(); return closed })
	time.Sleep(300 * time.Millisecond)
	if host.opened() != 2 {
		t.Fatalf("%d activations after passivation, want 2 (the subscriber must not re-activate it)", host.opened())
	}
	a4, err := rs.SubmitInput(ctx, uuid.NewString(), "three", "")
	if err != nil || a4.Epoch != 3 {
		t.Fatalf("submit after passivation: %+v %v, want epoch 3", a4, err)
	}
	if d := activations.Value(ReasonNew) - newBefore; d != 1 {
		t.Errorf("%d activations counted new, want 1", d)
	}
	if d := activations.Value(ReasonReactivation) - reBefore; d != 2 {
		t.Errorf("%d activations counted reactivation (the fenced one claimed again, the passivated one), want 2", d)
	}

	// A fenced activation with a submit waiting for the ledger answers it
	// Fenced; the front asks the next activation, which takes it.
	_, fence3 := host.session(2)
	close(fence3)
	a5, err := rs.SubmitInput(ctx, uuid.NewString(), "four", "")
	if err != nil || a5.Epoch != 4 || a5.Dup {
		t.Fatalf("submit to a fenced activation: %+v %v, want taken at epoch 4", a5, err)
	}
	s4, _ := host.session(3)
	if got, _ := s4.state(); len(got) != 1 || got[0] != "four" {
		t.Errorf("the fourth activation ran %q, want only \"four\"", got)
	}

	// A session that cannot be opened: the request fails with the reason.
	host.mu.Lock()
	host.fail = errors.New("no such session")
	host.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := n.request(rctx, "missing", &QueueRequest{}); err == nil {
		t.Error("a request to a session that cannot be opened succeeded")
	}
}
