package actors

import (
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/odin-code/odin/internal/checkpoint"
	"github.com/odin-code/odin/internal/llm/llmtest"
	"github.com/odin-code/odin/messages"
)

// blockingChanges is a change set whose FileChanges (the Code report's
// diffs, which read every changed file) hangs like a slow disk until
// released.
type blockingChanges struct {
	*checkpoint.Tracker
	entered chan struct{}
	release chan struct{}
}

func (b *blockingChanges) FileChanges(paths []string) (modified, created []messages.FileChange) {
	close(b.entered)
	<-b.release
	return b.Tracker.FileChanges(paths)
}

// The Code specialist diffs its changed files off its mailbox: while the
// diffs hang, the specialist still takes its messages — a stop from its
// parent ends it at once — and the late result is not reported by anyone.
func TestCodeReportDiffsOffTheMailbox(t *testing.T) {
	s := llmtest.NewScript().Add("code", report(map[string]any{"task": "t", "summary": "changed nothing"}))
	h := newHarness(t, s)
	system := NewActorSystem(slog.New(slog.DiscardHandler))
	defer system.Shutdown()
	tracker := &blockingChanges{Tracker: checkpoint.NewTracker(h.root, "t1"), entered: make(chan struct{}), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(tracker.release)
		}
	}()
	host := &specialistHost{deps: h.deps, changeSets: &changeSets{}}
	host.changeSets.put("cs1", tracker)
	type stopIt struct{}
	got := make(chan any, 16)
	var child *actor.PID
	parent := actor.PropsFromFunc(func(c actor.Context) {
		switch msg := c.Message().(type) {
		case *messages.Delegate:
			child = c.Spawn(newSpecialistProps(host))
			c.Send(child, msg)
		case *stopIt:
			c.Stop(child)
		case *actor.Terminated, *messages.Report:
			got <- msg
		}
	})
	pid := system.Root.Spawn(parent)
	system.Root.Send(pid, &messages.Delegate{TaskID: "t1", Agent: "code", Brief: "change it", Mode: messages.ModeEdit,
		Timeout: time.Minute, SessionID: "s1", ChangeSet: "cs1"})
	select {
	case <-tracker.entered:
	case m := <-got:
		t.Fatalf("the specialist ended before its report's diffs: %+v", m)
	case <-time.After(20 * time.Second):
		t.Fatal("the report's diffs never started")
	}
	system.Root.Send(pid, &stopIt{})
	select {
	case m := <-got:
		if _, ok := m.(*actor.Terminated); !ok {
			t.Fatalf("got %T, want the specialist stopped", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the specialist did not stop while its diffs hung: they run inside its Receive")
	}
	close(tracker.release)
	released = true
	select {
	case m := <-got:
		t.Fatalf("a stopped specialist reported after all: %+v", m)
	case <-time.After(200 * time.Millisecond):
	}
}
