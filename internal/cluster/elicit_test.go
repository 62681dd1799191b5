package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// askingSession is a hosted session whose MCP servers ask for input
// (serve.Elicitor): a form with one field, n, a number. It checks answers
// as the session's elicitor does and records those it took.
type askingSession struct {
	idleSession
	mu       sync.Mutex
	pending  map[string]messages.ElicitationRequested
	answered []string
}

// ask publishes a request for input, as a server's elicitation does.
func (s *askingSession) ask(id string) {
	ev := messages.ElicitationRequested{ID: id, Server: "fx", Mode: "form", Message: "Pick n", Schema: []byte(`{"type":"object","properties":{"n":{"type":"number"}}}`)}
	s.mu.Lock()
	s.pending[id] = ev
	s.mu.Unlock()
	s.bus.Publish(ev)
}

func (s *askingSession) AnswerElicitation(id, action string, content map[string]any) error {
	s.mu.Lock()
	if _, ok := s.pending[id]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("no pending elicitation %q", id)
	}
	if _, isNum := content["n"].(float64); action == "accept" && !isNum {
		s.mu.Unlock()
		return fmt.Errorf("%w: n: want a number, got %v", serve.ErrInvalidAnswer, content["n"])
	}
	delete(s.pending, id)
	s.answered = append(s.answered, fmt.Sprintf("%s %s %v", id, action, content["n"]))
	s.mu.Unlock()
	s.bus.Publish(messages.ElicitationResolved{ID: id, Action: action})
	return nil
}

func (s *askingSession) PendingElicitations() []messages.ElicitationRequested {
	s.mu.Lock()
	defer s.mu.Unlock()
	return byKey(s.pending)
}

func (s *askingSession) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.answered...)
}

type askingHost struct {
	mu sync.Mutex
	s  *askingSession
}

func (h *askingHost) Open(_ context.Context, id, _ string) (*Hosted, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.s = &askingSession{idleSession: idleSession{id: id, bus: events.New(id, nil)}, pending: map[string]messages.ElicitationRequested{}}
	return &Hosted{Session: h.s, Epoch: 1, Fenced: make(chan struct{})}, nil
}

func (h *askingHost) session() *askingSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.s
}

// pendingIDs are the IDs of the elicitations rs lists.
func pendingIDs(rs *RemoteSession) []string {
	ids := []string{}
	for _, e := range rs.PendingElicitations() {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestElicitationThroughTheFront: an MCP server's request for input in a
// session hosted by a grain is listed by the front (serve.Elicitor on the
// RemoteSession) from its event, and from the subscription for a front
// that attaches while it is pending; the front's answer reaches the
// hosted session, an answer that does not fit the form comes back as
// serve.ErrInvalidAnswer with the request still pending, and an unknown
// one as a plain error.
func TestElicitationThroughTheFront(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	host := &askingHost{}
	n, err := Start(Config{Name: "elicit", Store: st, Host: host, TTL: time.Second, Idle: time.Minute, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ctx := t.Context()
	rs, err := n.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	evs := rs.Bus().Subscribe(ctx, 64, true)

	s := host.session()
	s.ask("e1")
	select {
	case env := <-evs:
		if e, ok := env.Event.(messages.ElicitationRequested); !ok || e.ID != "e1" || e.Server != "fx" || string(e.Schema) == "" {
			t.Fatalf("the front's bus got %#v, want the typed request", env.Event)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the front")
	}
	if diff := cmp.Diff([]string{"e1"}, pendingIDs(rs)); diff != "" {
		t.Errorf("pending at the front (-want +got):\n%s", diff)
	}

	err = rs.AnswerElicitation("e1", "accept", map[string]any{"n": "many"})
	if !errors.Is(err, serve.ErrInvalidAnswer) {
		t.Errorf("an answer outside the form: %v, want serve.ErrInvalidAnswer", err)
	}
	if err := rs.AnswerElicitation("e9", "decline", nil); err == nil || errors.Is(err, serve.ErrInvalidAnswer) {
		t.Errorf("an answer to no request: %v, want a plain error", err)
	}
	if got := s.took(); len(got) != 0 {
		t.Fatalf("the session took %v before a valid answer", got)
	}

	// A second front attaching now gets the pending request with its
	// subscription, before any event.
	rs2, err := n.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer rs2.Close(ctx)
	if diff := cmp.Diff([]string{"e1"}, pendingIDs(rs2)); diff != "" {
		t.Errorf("pending at a front that attached later (-want +got):\n%s", diff)
	}

	if err := rs2.AnswerElicitation("e1", "accept", map[string]any{"n": 3}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"e1 accept 3"}, s.took()); diff != "" {
		t.Errorf("answers the hosted session took (-want +got):\n%s", diff)
	}
	eventually(t, "the resolved request left both fronts' lists", func() bool {
		return len(rs.PendingElicitations()) == 0 && len(rs2.PendingElicitations()) == 0
	})
}
