package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// idleSession is a session with nothing queued: the benchmark measures
// the wire and the grain, not a model.
type idleSession struct {
	id  string
	bus *events.Bus
}

func (s *idleSession) ID() string { return s.id }
func (s *idleSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	return messages.UserMessage{ID: "m", Body: body, Mode: mode}
}
func (s *idleSession) Cancel(string)                         {}
func (s *idleSession) Bus() *events.Bus                      { return s.bus }
func (s *idleSession) Answer(string, policy.Decision) error  { return nil }
func (s *idleSession) Pending() []messages.ApprovalRequested { return nil }
func (s *idleSession) Close(context.Context) error           { return nil }
func (s *idleSession) Queue(context.Context) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}
func (s *idleSession) Remove(context.Context, string) (*messages.QueueState, error) {
	return &messages.QueueState{}, nil
}

type idleHost struct{}

func (idleHost) Open(_ context.Context, id, _ string) (*Hosted, error) {
	return &Hosted{Session: &idleSession{id: id, bus: events.New(id, nil)}, Epoch: 1, Fenced: make(chan struct{})}, nil
}

// BenchmarkRemoteRoundTrip: a front node asks a session grain on another
// node (its own process-local remote, over loopback TCP) for its queue;
// p50/p90/p99 of the round trip are reported in µs. Issue 29 asks for a
// p50 under 1 ms over 1,000 calls (-benchtime=1000x). Two remotes in one
// process race on grpc's global logger, so this is not run under -race.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "odin.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	worker, err := Start(Config{Name: "bench", Store: st, Host: idleHost{}, TTL: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer worker.Stop()
	front, err := Start(Config{Name: "bench", Store: st, TTL: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer front.Stop()
	ctx := context.Background()
	rs, err := front.Attach(ctx, "bench-session")
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	if owner := front.Owner("bench-session"); owner != worker.Address() {
		b.Fatalf("the grain is on %q, want the worker %s", owner, worker.Address())
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := rs.Queue(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.9), "p90-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// claimHost claims each session in the store, as odin worker does, and
// runs an idleSession that records when it was closed.
type claimHost struct {
	st     store.Claimer
	mu     sync.Mutex
	closed map[string]time.Time
}

func (h *claimHost) Open(ctx context.Context, id, node string) (*Hosted, error) {
	c, err := h.st.Claim(ctx, id, node)
	if err != nil {
		return nil, err
	}
	s := &closeRecorder{idleSession: idleSession{id: id, bus: events.New(id, nil)}, h: h}
	return &Hosted{Session: s, Epoch: c.Epoch(), Fenced: make(chan struct{}), Previous: c.Previous()}, nil
}

type closeRecorder struct {
	idleSession
	h *claimHost
}

func (s *closeRecorder) Close(context.Context) error {
	s.h.mu.Lock()
	s.h.closed[s.id] = time.Now()
	s.h.mu.Unlock()
	return nil
}

// BenchmarkPassivation: 1,000 session grains (claimed in a SQLite store)
// are activated on a worker from a front node, left idle, and passivated
// by their grain's timer (--idle 1s here). Reported: how long after its
// idle time each was passivated (max and p99, in ms) and, for 20 of them,
// the re-activation a request causes (claim at a new epoch, open, answer;
// p50 and max in ms). Issue 29 asks for all 1,000 within 5 s of their idle
// time and each re-activation under 500 ms. Run once:
// go test -run - -bench Passivation -benchtime 1x ./internal/cluster
// (ODIN_BENCH_SESSIONS changes the count).
func BenchmarkPassivation(b *testing.B) {
	n := 1000
	if v := os.Getenv("ODIN_BENCH_SESSIONS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 20 {
			b.Fatalf("ODIN_BENCH_SESSIONS=%q: want a count of 20 or more", v)
		}
	}
	const idle = time.Second
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "odin.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ids := make([]string, n)
	for i := range ids {
		s, err := st.CreateSession(ctx, store.Session{Project: "/p"})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = s.ID
	}
	host := &claimHost{st: st, closed: map[string]time.Time{}}
	worker, err := Start(Config{Name: "passivation", Store: st, Host: host, TTL: 3 * time.Second, Idle: idle})
	if err != nil {
		b.Fatal(err)
	}
	defer worker.Stop()
	front, err := Start(Config{Name: "passivation", Store: st, TTL: 3 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer front.Stop()
	for range b.N {
		host.mu.Lock()
		clear(host.closed)
		host.mu.Unlock()
		// Activate every session (a subscription is a request to its
		// grain), 16 at a time; the last request each grain got is the
		// start of its idle time.
		last := make([]time.Time, n)
		sessions := make([]*RemoteSession, n)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i, id := range ids {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				rs, err := front.Attach(ctx, id)
				if err != nil {
					b.Error(err)
					return
				}
				last[i], sessions[i] = time.Now(), rs
			}()
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		deadline := time.Now().Add(idle + 60*time.Second)
		for {
			host.mu.Lock()
			done := len(host.closed)
			host.mu.Unlock()
			if done == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d sessions passivated", done, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		lags := make([]time.Duration, 0, n)
		host.mu.Lock()
		for i, id := range ids {
			lags = append(lags, host.closed[id].Sub(last[i].Add(idle)))
		}
		host.mu.Unlock()
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		late := 0
		for _, l := range lags {
			if l > 5*time.Second {
				late++
			}
		}
		b.ReportMetric(float64(lags[len(lags)-1].Milliseconds()), "passivation-lag-max-ms")
		b.ReportMetric(float64(lags[len(lags)*99/100].Milliseconds()), "passivation-lag-p99-ms")
		b.ReportMetric(float64(late), "passivated-late")
		// Re-activate 20 of them, one at a time: the request finds no
		// grain, the worker activates one, which claims the session again.
		react := make([]time.Duration, 0, 20)
		for i := range 20 {
			rs := sessions[i*(n/20)]
			t0 := time.Now()
			if _, err := rs.Queue(ctx); err != nil {
				b.Fatal(err)
			}
			react = append(react, time.Since(t0))
		}
		sort.Slice(react, func(i, j int) bool { return react[i] < react[j] })
		b.ReportMetric(float64(react[len(react)/2].Microseconds())/1e3, "reactivation-p50-ms")
		b.ReportMetric(float64(react[len(react)-1].Microseconds())/1e3, "reactivation-max-ms")
		for _, rs := range sessions {
			_ = rs.Close(ctx)
		}
	}
}
