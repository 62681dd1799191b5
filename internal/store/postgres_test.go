package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"

	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
	"github.com/odin-code/odin/internal/store/storetest"
)

// openPG opens a Postgres store on a fresh database of srv.
func openPG(t testing.TB, srv *pgtest.Server, opts ...store.Option) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), srv.Database(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgresConformance runs the whole contract against a real
// PostgreSQL server started for it, one database per case.
func TestPostgresConformance(t *testing.T) {
	srv := pgtest.New(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t, srv) })
}

// TestPostgresReopenKeepsData checks that a second store on the same
// database finds the schema migrated (no second migration) and the data.
func TestPostgresReopenKeepsData(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t)
	ctx := context.Background()
	a, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := a.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Session(ctx, sess.ID)
	if err != nil || got.Project != "/p" {
		t.Fatalf("reopened: %+v, %v", got, err)
	}
}

// TestPostgresConcurrentAppendsTwoPools appends from two stores on one
// database, as two hosts would (separate pools, no shared lock in the
// process): the session row lock must keep the sequence numbers unique and
// gap-free.
func TestPostgresConcurrentAppendsTwoPools(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t)
	ctx := context.Background()
	var stores []*store.Postgres
	for range 2 {
		s, err := store.OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	sess, err := stores[0].CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	const perWorker, workers = 15, 8
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			s := stores[w%2]
			for i := range perWorker {
				m := store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: fmt.Sprintf("w%d-%d", w, i)}}}
				if _, err := s.AppendMessage(ctx, m); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := stores[1].AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != perWorker*workers {
		t.Fatalf("%d messages, want %d", len(msgs), perWorker*workers)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d: not gap-free", i, m.Seq)
		}
	}
	got, err := stores[0].Session(ctx, sess.ID)
	if err != nil || got.MessageCount != int64(len(msgs)) {
		t.Fatalf("message_count %d (%v), want %d", got.MessageCount, err, len(msgs))
	}
}

// TestPostgresClaimRacesWrites: a writer keeps appending through claim A
// from one pool while claim B is taken from another. Once B's Claim has
// returned, no write of A lands: every message of A comes before B's
// first, and A's later writes are ErrFenced.
func TestPostgresClaimRacesWrites(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t)
	ctx := context.Background()
	s1 := openPGURL(t, url)
	s2 := openPGURL(t, url)
	sess, err := s1.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s1.Claim(ctx, sess.ID, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	type result struct {
		fenced, ok int
		err        error
	}
	done := make(chan result)
	go func() {
		var r result
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- r
				return
			default:
			}
			_, err := a.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: fmt.Sprintf("a-%d", i)}}})
			switch {
			case err == nil:
				r.ok++
			case errors.Is(err, store.ErrFenced):
				r.fenced++
			default:
				r.err = err
				done <- r
				return
			}
		}
	}()
	// Let A write a few before it is fenced.
	for {
		got, err := s2.Session(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.MessageCount >= 5 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b, err := s2.Claim(ctx, sess.ID, "host-b")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := b.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	r := <-done
	if r.err != nil {
		t.Fatalf("A's write failed otherwise than fenced: %v", r.err)
	}
	msgs, err := s2.AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Text() != "b" && m.Seq > owner.Seq {
			t.Errorf("A's message %q (seq %d) landed after B's claim (B's message is seq %d)", m.Text(), m.Seq, owner.Seq)
		}
	}
	if int64(r.ok) != owner.Seq-1 {
		t.Errorf("A saw %d writes succeed, but %d of its messages are stored", r.ok, owner.Seq-1)
	}
	_, err = a.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "late"}}})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("A after B's claim: %v, want ErrFenced", err)
	}
}

func openPGURL(t *testing.T, url string) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgresDeadlockRetried: two transactions append to two sessions in
// opposite orders, each waiting for the other's first append, so the
// server finds a deadlock and aborts one of them (40P01). The store runs
// that one again, and both commit: each session holds one message from
// each transaction.
func TestPostgresDeadlockRetried(t *testing.T) {
	srv := pgtest.New(t)
	s := openPG(t, srv)
	ctx := t.Context()
	var ids [2]string
	for i := range ids {
		sess, err := s.CreateSession(ctx, store.Session{Project: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = sess.ID
	}
	// firstDone[k] is closed once transaction k holds its first session
	// row's lock; only the first try of each waits for the other.
	firstDone := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	tries := [2]int{}
	errs := make(chan error, 2)
	for k := range 2 {
		go func() {
			errs <- s.Batch(ctx, func(ctx context.Context) error {
				tries[k]++
				first, second := ids[k], ids[1-k]
				if _, err := s.AppendMessage(ctx, text(first, fmt.Sprintf("tx%d first", k))); err != nil {
					return err
				}
				if tries[k] == 1 {
					close(firstDone[k])
					<-firstDone[1-k]
				}
				_, err := s.AppendMessage(ctx, text(second, fmt.Sprintf("tx%d second", k)))
				return err
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a batch failed despite the retry: %v", err)
		}
	}
	if tries[0]+tries[1] < 3 {
		t.Fatalf("tries %v: no transaction was run again, so no deadlock happened and the test proves nothing", tries)
	}
	for _, id := range ids {
		msgs, err := s.AllMessages(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range msgs {
			got = append(got, m.Text())
		}
		if len(got) != 2 {
			t.Errorf("session %s holds %q, want one message of each transaction", id, got)
		}
	}
}

func text(session, s string) store.Message {
	return store.Message{SessionID: session, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: s}}}
}

// BenchmarkFencedAppendPostgres is one committed append of an assistant
// reply (~1.3 KB of parts) through a claim, on a PostgreSQL server of
// this machine, over its unix socket and over TCP on 127.0.0.1: the epoch
// check, the session row's lock and the insert in one transaction.
// "plain" is the same append without a claim, for the fence's share.
// Besides ns/op it reports the median and the 99th percentile of single
// appends (issue 28 asks for < 1 ms at the median on loopback).
func BenchmarkFencedAppendPostgres(b *testing.B) {
	for _, via := range []string{"socket", "loopback"} {
		srv := pgtest.New
		if via == "loopback" {
			srv = pgtest.NewTCP
		}
		b.Run(via, func(b *testing.B) { benchFencedAppend(b, srv(b)) })
	}
}

func benchFencedAppend(b *testing.B, srv *pgtest.Server) {
	for _, fenced := range []bool{true, false} {
		name := "plain"
		if fenced {
			name = "fenced"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := openPG(b, srv)
			sess, err := s.CreateSession(ctx, store.Session{Project: "/home/dev/proj"})
			if err != nil {
				b.Fatal(err)
			}
			var w store.Store = s
			if fenced {
				if w, err = s.Claim(ctx, sess.ID, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			m := conversation(sess.ID, 2)[1]
			m.ID, m.Seq, m.CreatedAt = "", 0, time.Time{}
			var took []time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := w.AppendMessage(ctx, m); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestPostgresStalledWriterDoesNotBlockClaim: a writer stopped in the
// middle of a fenced transaction (its process SIGSTOPped) holds its
// session's row lock; the server ends that transaction once the client
// has been silent for the stall timeout, so another host's Claim goes
// through instead of waiting as long as the writer is stopped. When the
// writer resumes, its transaction is gone (nothing of it stored) and its
// next write is fenced.
func TestPostgresStalledWriterDoesNotBlockClaim(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t)
	ctx := context.Background()
	s1, err := store.OpenPostgres(ctx, url, store.WithStallTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s1.Close() })
	s2 := openPGURL(t, url)
	sess, err := s1.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s1.Claim(ctx, sess.ID, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	locked, resume := make(chan struct{}), make(chan struct{})
	batch := make(chan error, 1)
	go func() {
		batch <- a.Batch(ctx, func(ctx context.Context) error {
			if _, err := a.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "stalled"}}}); err != nil {
				return err
			}
			close(locked)
			<-resume // the process is stopped here, the row locked
			_, err := a.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "after the stall"}}})
			return err
		})
	}()
	<-locked
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := s2.Claim(cctx, sess.ID, "host-b")
	if err != nil {
		close(resume)
		t.Fatalf("claim while a writer is stalled in a transaction: %v", err)
	}
	close(resume)
	if err := <-batch; err == nil {
		t.Fatal("the stalled writer's transaction committed after another host claimed the session")
	}
	if _, err := a.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "late"}}}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the stalled writer's next write: %v, want ErrFenced", err)
	}
	if _, err := b.AppendMessage(ctx, store.Message{SessionID: sess.ID, Role: llm.RoleUser, Parts: []store.Part{store.TextPart{Text: "b"}}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s2.AllMessages(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Text() != "b" {
		var texts []string
		for _, m := range msgs {
			texts = append(texts, m.Text())
		}
		t.Errorf("stored %q, want only the new owner's message", texts)
	}
}

// TestPostgresMembershipHasItsOwnPool: with every connection of the
// sessions' pool held by a transaction (a worker's thousand turns
// writing), a heartbeat and a read of the members still go through at
// once, on the membership pool: the beat that waited behind the turns
// came later than the TTL and the cluster dropped a live worker.
func TestPostgresMembershipHasItsOwnPool(t *testing.T) {
	srv := pgtest.New(t)
	s := openPG(t, srv)
	ctx := t.Context()
	// More holders than the pool has connections (pgxpool: 4 or the
	// CPU count): the ones beyond it queue, as the turns' writes would.
	const holders = 64
	release := make(chan struct{})
	var held sync.WaitGroup
	errs := make(chan error, holders)
	for range holders {
		held.Add(1)
		go func() {
			defer held.Done()
			errs <- s.Batch(ctx, func(context.Context) error { <-release; return nil })
		}()
	}
	defer func() {
		close(release)
		held.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("holding batch: %v", err)
			}
		}
	}()
	// The sessions' pool is full once a write cannot get a connection.
	for {
		c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := s.CreateSession(c, store.Session{Project: "/p"})
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Bounded only so that a regression fails instead of hanging until
	// the holders are released: the membership pool answers at once.
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	now := time.Now()
	m := store.Member{Cluster: "odin", ID: "w1", Host: "127.0.0.1", Port: 7001, Kinds: []string{"session"}, Heartbeat: now}
	if err := s.Heartbeat(c, m); err != nil {
		t.Fatalf("heartbeat with the sessions' pool full: %v", err)
	}
	ms, err := s.Members(c, "odin", now.Add(-time.Second))
	if err != nil || len(ms) != 1 || ms[0].ID != "w1" {
		t.Fatalf("members with the sessions' pool full: %v, %v", ms, err)
	}
}
