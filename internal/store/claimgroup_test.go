package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/llm"
)

// Claims that wait while the writer is busy share the next transaction,
// and each still bumps its session's epoch by exactly one: 30 sessions
// claimed at once, one of them three times and one that does not exist,
// queued behind a batch that holds the writer. The claims take two
// transactions (the first claim's, then all the others'), the session
// claimed thrice goes to epoch 3 with three distinct epochs handed out,
// the missing session fails alone with ErrNotFound, and a write through
// a superseded claim is fenced.
func TestClaimsShareTransactions(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 30
	var ids []string
	for range n {
		sess, err := s.CreateSession(ctx, Session{Project: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	hold, holding := make(chan struct{}), make(chan struct{})
	batchErr := make(chan error, 1)
	go func() {
		batchErr <- s.Batch(ctx, func(ctx context.Context) error {
			if _, err := s.AppendMessage(ctx, Message{SessionID: ids[1], Role: llm.RoleUser, Parts: []Part{TextPart{Text: "hold"}}}); err != nil {
				return err
			}
			close(holding)
			<-hold
			return nil
		})
	}()
	<-holding

	type result struct {
		session string
		h       *Fenced
		err     error
	}
	claims := append(append([]string(nil), ids...), ids[0], ids[0], "no-such-session")
	results := make([]result, len(claims))
	var wg sync.WaitGroup
	for i, id := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.Claim(ctx, id, fmt.Sprint("node-", i))
			results[i] = result{id, h, err}
		}()
	}
	// Every claim is queued (one leads, waiting for the writer) before
	// the writer is released.
	for deadline := time.Now().Add(30 * time.Second); ; {
		s.claims.mu.Lock()
		queued := len(s.claims.waiting)
		s.claims.mu.Unlock()
		if queued == len(claims)-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d claims queued", queued, len(claims)-1)
		}
		time.Sleep(time.Millisecond)
	}
	close(hold)
	wg.Wait()
	if err := <-batchErr; err != nil {
		t.Fatal(err)
	}

	var epochs0 []int64
	for _, r := range results {
		switch {
		case r.session == "no-such-session":
			if !errors.Is(r.err, ErrNotFound) {
				t.Errorf("claim of a missing session: %v, want ErrNotFound", r.err)
			}
		case r.err != nil:
			t.Errorf("claim %s: %v", r.session, r.err)
		case r.session == ids[0]:
			epochs0 = append(epochs0, r.h.Epoch())
		case r.h.Epoch() != 1:
			t.Errorf("session %s claimed once is at epoch %d, want 1", r.session, r.h.Epoch())
		}
	}
	slices.Sort(epochs0)
	if diff := cmp.Diff([]int64{1, 2, 3}, epochs0); diff != "" {
		t.Errorf("epochs of the session claimed three times (-want +got):\n%s", diff)
	}
	// The first claim of a group leads alone; every other claim waited
	// for it, and the two of ids[0] that could not share a group with
	// another of ids[0] make at most two more.
	s.claims.mu.Lock()
	groups := s.claims.groups
	s.claims.mu.Unlock()
	if groups < 2 || groups > 4 {
		t.Errorf("%d claims took %d transactions, want 2 to 4", len(claims), groups)
	}
	// Fencing holds across a group: only the newest claim of ids[0]
	// writes.
	for _, r := range results {
		if r.session != ids[0] || r.err != nil {
			continue
		}
		_, err := r.h.AppendMessage(ctx, Message{SessionID: ids[0], Role: llm.RoleUser, Parts: []Part{TextPart{Text: "hi"}}})
		if r.h.Epoch() == 3 && err != nil {
			t.Errorf("write through the newest claim: %v", err)
		}
		if r.h.Epoch() < 3 && !errors.Is(err, ErrFenced) {
			t.Errorf("write through the claim at epoch %d: %v, want ErrFenced", r.h.Epoch(), err)
		}
	}
	// Each claim of ids[0] replaced the one before it.
	var prevs []string
	for _, r := range results {
		if r.session == ids[0] && r.err == nil {
			prevs = append(prevs, r.h.Previous())
		}
	}
	if !slices.Contains(prevs, "") || len(prevs) != 3 {
		t.Errorf("previous owners of the session claimed three times: %q, want the first to have none", prevs)
	}
}

// A claim whose context has ended before its group is written writes
// nothing and returns its context's error.
func TestClaimCancelledBeforeGroup(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess, err := s.CreateSession(ctx, Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Claim(cctx, sess.ID, "node"); !errors.Is(err, context.Canceled) {
		t.Fatalf("claim with an ended context: %v, want context.Canceled", err)
	}
	h, err := s.Claim(ctx, sess.ID, "node")
	if err != nil {
		t.Fatal(err)
	}
	if h.Epoch() != 1 {
		t.Errorf("epoch %d after the cancelled claim and one more, want 1", h.Epoch())
	}
}

// With every shared read connection taken (a node's sessions reading
// their histories), the members table is still read at once, on the
// connection kept for it.
func TestMembersReadHasItsOwnConnection(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	if err := s.Heartbeat(ctx, Member{Cluster: "odin", ID: "w1", Host: "127.0.0.1", Port: 7001, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	for {
		c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		conn, err := s.r.Conn(c)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break // every read connection is held
		}
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ms, err := s.Members(c, "odin", now.Add(-time.Second))
	if err != nil || len(ms) != 1 || ms[0].ID != "w1" {
		t.Fatalf("members with every read connection held: %v, %v", ms, err)
	}
}
