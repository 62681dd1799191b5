package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// queued is how many writers wait at g (urgent, normal).
func (g *writeGate) queued() (int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.urgent), len(g.normal)
}

func waitQueued(t *testing.T, g *writeGate, urgent, normal int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if u, n := g.queued(); u == urgent && n == normal {
			return
		}
		if time.Now().After(deadline) {
			u, n := g.queued()
			t.Fatalf("writers queued: %d urgent, %d normal; want %d, %d", u, n, urgent, normal)
		}
	}
}

// TestWriteGateOrder: queued writers get the connection in arrival order,
// urgent ones before every normal one; a writer whose context ends leaves
// the queue without taking or losing the connection.
func TestWriteGateOrder(t *testing.T) {
	g := &writeGate{}
	ctx := context.Background()
	if err := g.lock(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	enter := func(name string, c context.Context) {
		defer wg.Done()
		if err := g.lock(c); err != nil {
			mu.Lock()
			order = append(order, name+":"+err.Error())
			mu.Unlock()
			return
		}
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
		g.unlock()
	}
	for i, name := range []string{"n1", "n2", "n3"} {
		wg.Add(1)
		go enter(name, ctx)
		waitQueued(t, g, 0, i+1)
	}
	gone, cancel := context.WithCancel(ctx)
	wg.Add(1)
	go enter("gone", gone)
	waitQueued(t, g, 0, 4)
	for i, name := range []string{"u1", "u2"} {
		wg.Add(1)
		go enter(name, urgent(ctx))
		waitQueued(t, g, i+1, 4)
	}
	cancel()
	waitQueued(t, g, 2, 3)
	g.unlock()
	wg.Wait()
	want := []string{"gone:context canceled", "u1", "u2", "n1", "n2", "n3"}
	if len(order) != len(want) {
		t.Fatalf("order %q, want %q", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %q, want %q", order, want)
		}
	}
	if g.busy {
		t.Error("the gate is still held after every writer left")
	}
}

// TestHeartbeatAheadOfQueuedWrites: with session writes queued behind a
// long one, a member's heartbeat is committed before any of them runs
// (each sees the member's row), so a busy node is not dropped from its
// cluster for a late beat.
func TestHeartbeatAheadOfQueuedWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = s.write(ctx, func(*wtx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	const n = 5
	saw := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.write(ctx, func(tx *wtx) error {
				return tx.QueryRowContext(ctx, `SELECT count(*) FROM cluster_members WHERE cluster = 'c'`).Scan(&saw[i])
			})
		}()
		waitQueued(t, s.gate, 0, i+1)
	}
	beat := make(chan error, 1)
	go func() {
		beat <- s.Heartbeat(ctx, Member{Cluster: "c", ID: "m1", Host: "127.0.0.1", Port: 1, Kinds: []string{"session"}, Heartbeat: time.Now()})
	}()
	waitQueued(t, s.gate, 1, n)
	close(release)
	if err := <-beat; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if saw[i] != 1 {
			t.Errorf("queued write %d ran before the heartbeat (saw %d members)", i, saw[i])
		}
	}
}
