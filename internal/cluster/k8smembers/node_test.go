//go:build k8s

package k8smembers

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/odin-code/odin/internal/cluster"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/messages"
)

// quietSession is a hosted session that does nothing: the test is about
// where it is placed.
type quietSession struct {
	id  string
	bus *events.Bus
}

func (s *quietSession) ID() string { return s.id }
func (s *quietSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return messages.UserMessage{ID: "m", Body: body, Mode: mode}
}
func (s *quietSession) Cancel(string)                         {}
func (s *quietSession) Bus() *events.Bus                      { return s.bus }
func (s *quietSession) Answer(string, policy.Decision) error  { return nil }
func (s *quietSession) Pending() []messages.ApprovalRequested { return nil }
func (s *quietSession) Close(context.Context) error           { return nil }
func (s *quietSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *quietSession) Remove(context.Context, string) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}

type quietHost struct{}

func (quietHost) Open(_ context.Context, id, _ string) (*cluster.Hosted, error) {
	return &cluster.Hosted{Session: &quietSession{id: id, bus: events.New(id, nil)}, Epoch: 1, Fenced: make(chan struct{})}, nil
}

// Two nodes whose only membership is the Leases of one namespace find
// each other: the front places a session on the worker (the only node
// hosting sessions) and reaches it over the wire; when the worker
// leaves, its Lease goes and the front sees it gone.
//
// Two remotes in one process race on grpc's global logger, so this
// package's tests run without -race (make test).
func TestNodesMeetThroughLeases(t *testing.T) {
	client := fake.NewClientset()
	members := &Leases{Client: client, Namespace: "odin"}
	worker, err := cluster.Start(cluster.Config{Name: "k8s", Store: members, Host: quietHost{}, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			worker.Stop()
		}
	}()
	front, err := cluster.Start(cluster.Config{Name: "k8s", Store: members, TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rs, err := front.Attach(ctx, "session-1")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	if _, err := rs.Queue(ctx); err != nil {
		t.Fatalf("the session on the worker does not answer: %v", err)
	}
	if owner := front.Owner("session-1"); owner != worker.Address() {
		t.Fatalf("the session is on %q, want the worker %s", owner, worker.Address())
	}
	got, err := members.Members(ctx, "k8s", time.Time{})
	if err != nil || len(got) != 2 {
		t.Fatalf("leases: %+v, %v; want both nodes", got, err)
	}

	worker.Stop()
	stopped = true
	for {
		got, err := members.Members(ctx, "k8s", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 1 && got[0].ID == front.ID() && len(front.Members()) == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the worker's lease or membership is still there: leases %+v, members %d", got, len(front.Members()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
