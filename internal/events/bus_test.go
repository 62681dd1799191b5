package events

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/messages"
)

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
			if len(got) == 100 {
				return
			}
		}
	}()
	for i := range 100 {
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

func TestCancelClosesTheChannelAndUnblocksPublishers(t *testing.T) {
	b := New("s", nil)
	ctx, cancel := context.WithCancel(context.Background())
	ch := b.Subscribe(ctx, 0, true) // lossless and never read: Publish blocks
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.Publish(messages.Notice{Text: "stuck until cancel"})
	}()
	cancel()
	wg.Wait()
	for range ch {
	}
	b.Publish(messages.Notice{Text: "after"}) // no subscriber left: must not panic
	var nilBus *Bus
	nilBus.Publish(messages.Notice{}) // a nil bus is a no-op
}
