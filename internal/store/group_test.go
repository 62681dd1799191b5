package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
)

// Batches that wait while a group is written share the next transaction:
// twenty batches, the first held open until the nineteen others queue,
// take two transactions; each batch is still all or nothing on its own —
// the one that fails is undone alone and gets its own error.
func TestGroupedSharesTransactions(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := NewGrouped(s)
	const n = 20
	var ids []string
	for range n {
		sess, err := g.CreateSession(ctx, Session{Project: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	boom := errors.New("boom")
	batch := func(i int, hold <-chan struct{}, started chan<- struct{}) error {
		return g.Batch(ctx, func(ctx context.Context) error {
			m := Message{SessionID: ids[i], Role: llm.RoleUser, Parts: []Part{TextPart{Text: fmt.Sprint("batch ", i)}}}
			if _, err := g.AppendMessage(ctx, m); err != nil {
				return err
			}
			if started != nil {
				close(started)
				<-hold
			}
			if i == 5 {
				return boom
			}
			return nil
		})
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	hold, started := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() { defer wg.Done(); errs[0] = batch(0, hold, started) }()
	<-started
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = batch(i, nil, nil) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		queued := len(g.waiting)
		g.mu.Unlock()
		if queued == n-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches queued behind the held one, want %d", queued, n-1)
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	for i, err := range errs {
		if want := i == 5; errors.Is(err, boom) != want || (!want && err != nil) {
			t.Errorf("batch %d: %v", i, err)
		}
	}
	for i, id := range ids {
		msgs, err := g.Messages(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 0, false: 1}[i == 5]; len(msgs) != want {
			t.Errorf("session %d: %d messages stored, want %d", i, len(msgs), want)
		}
	}
	// The leader counts its group after telling the callers.
	var groups int
	for leading := true; leading; {
		g.mu.Lock()
		leading, groups = g.leading, g.groups
		g.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	if groups != 2 {
		t.Errorf("%d transactions for %d batches, want 2: the held one, then all that waited", groups, n)
	}
}
