package events

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/messages"
)

// Within its backlog (here 64 events) a lossless subscriber gets every
// event in order, however slowly it reads.
func TestLosslessSubscriberGetsEverythingInOrder(t *testing.T) {
	b := New("s1", func() time.Time { return time.Unix(1, 0) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.Subscribe(ctx, 1, true)
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for env := range ch {
			got = append(got, env.Event.(messages.TextDelta).Text)
			if env.Session != "s1" || env.Time.Unix() != 1 {
				t.Errorf("envelope = %+v", env)
			}
			if len(got) == 60 {
				return
			}
		}
	}()
	for i := range 60 {
		b.Publish(messages.TextDelta{Text: string(rune('a' + i%26))})
	}
	<-done
	for i, s := range got {
		if s != string(rune('a'+i%26)) {
			t.Fatalf("event %d = %q out of order", i, s)
		}
	}
}

func TestLossySubscriberNeverBlocksPublish(t *testing.T) {
	b := New("s", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.Subscribe(ctx, 2, false) // never read
	for range 1000 {
		b.Publish(messages.Notice{Text: "x"})
	}
	if n := len(ch); n != 2 {
		t.Errorf("buffered %d events, want the buffer of 2", n)
	}
}

func TestCancelClosesTheChannel(t *testing.T) {
	b := New("s", nil)
	ctx, cancel := context.WithCancel(context.Background())
	ch := b.Subscribe(ctx, 0, true) // lossless and never read
	b.Publish(messages.Notice{Text: "queued, never read"})
	cancel()
	for range ch {
	}
	b.Publish(messages.Notice{Text: "after"}) // no subscriber left: must not panic
	var nilBus *Bus
	nilBus.Publish(messages.Notice{}) // a nil bus is a no-op
}

// A stalled lossless subscriber (a front end that stopped reading) never
// blocks the publisher, and is told what it missed: every event is either
// delivered or counted in a Resync, and turn events are always delivered.
func TestStalledLosslessSubscriberNeverBlocksPublishAndIsTold(t *testing.T) {
	b := New("s", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.Subscribe(ctx, 1, true)
	const deltas = 10000
	published := make(chan struct{})
	go func() {
		defer close(published)
		b.Publish(messages.TurnStarted{Input: messages.UserMessage{ID: "in1"}})
		for range deltas {
			b.Publish(messages.TextDelta{Text: "x"})
		}
		b.Publish(messages.InputQueued{Input: messages.UserMessage{ID: "in2"}})
		for range deltas {
			b.Publish(messages.TextDelta{Text: "y"})
		}
		b.Publish(messages.TurnFinished{Result: messages.TurnResult{Answer: "done"}})
	}()
	select {
	case <-published:
	case <-time.After(30 * time.Second): // a deadlock guard, not a speed check
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	var got []string
	delivered, dropped, resyncs := 0, 0, 0
	for env := range ch {
		switch ev := env.Event.(type) {
		case messages.TextDelta:
			delivered++
		case messages.Resync:
			resyncs++
			dropped += ev.Dropped
			got = append(got, "resync")
		case messages.TurnStarted:
			got = append(got, "started")
		case messages.InputQueued:
			got = append(got, "queued")
		case messages.TurnFinished:
			got = append(got, "finished")
			cancel()
		}
	}
	if delivered+dropped != 2*deltas {
		t.Errorf("delivered %d + dropped %d != %d published: events were lost silently", delivered, dropped, 2*deltas)
	}
	if resyncs == 0 || dropped == 0 {
		t.Errorf("the subscriber was never told it fell behind (resyncs %d, dropped %d)", resyncs, dropped)
	}
	// Turn and input events survive, in order, with the resyncs between.
	var essentials []string
	for _, g := range got {
		if g != "resync" {
			essentials = append(essentials, g)
		}
	}
	if diff := cmp.Diff([]string{"started", "queued", "finished"}, essentials); diff != "" {
		t.Errorf("essential events (-want +got):\n%s", diff)
	}
}

// A lossless subscriber that keeps up misses nothing and sees no Resync.
func TestKeepingUpMeansNoResync(t *testing.T) {
	b := New("s", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.Subscribe(ctx, 1, true)
	n := 0
	for range 50 { // below the backlog, read as published
		b.Publish(messages.TextDelta{Text: "x"})
		env := <-ch
		if _, ok := env.Event.(messages.TextDelta); !ok {
			t.Fatalf("got %T", env.Event)
		}
		n++
	}
	if n != 50 {
		t.Fatalf("got %d", n)
	}
}
