package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/store"
)

// testCluster is a protoactor cluster that is never started: no remote
// listens (two remotes in one process share grpc's global logger, a data
// race of protoactor's), but its event stream, member list and PID cache
// work, which is all the lookup and the provider use.
func testCluster(t *testing.T, address string, provider cluster.ClusterProvider, lookup cluster.IdentityLookup, kinds ...string) *cluster.Cluster {
	t.Helper()
	sys := actors.NewActorSystem(slog.New(slog.DiscardHandler))
	sys.ProcessRegistry.Address = address
	var ks []*cluster.Kind
	for _, k := range kinds {
		ks = append(ks, cluster.NewKind(k, actor.PropsFromFunc(func(actor.Context) {})))
	}
	cfg := cluster.Configure("t", provider, lookup, remote.Configure("127.0.0.1", 0), cluster.WithKinds(ks...))
	c := cluster.New(sys, cfg)
	c.Remote = remote.NewRemote(sys, cfg.RemoteConfig)
	t.Cleanup(sys.Shutdown)
	return c
}

func member(id string, port int32, kinds ...string) *cluster.Member {
	return &cluster.Member{Id: id, Host: "127.0.0.1", Port: port, Kinds: kinds}
}

// owners maps n identities to their owner addresses.
func owners(l *Lookup, n int) map[string]int {
	out := map[string]int{}
	for i := range n {
		out[l.Owner(cluster.NewClusterIdentity(fmt.Sprintf("s-%d", i), KindSession))]++
	}
	return out
}

// TestLookupPlacement: sessions go only to members hosting the kind,
// spread over them; a member whose endpoint terminates leaves placement
// at once (before any topology change) and comes back when it
// reconnects.
func TestLookupPlacement(t *testing.T) {
	l := &Lookup{ActivationTimeout: 100 * time.Millisecond}
	c := testCluster(t, "127.0.0.1:9000", nil, l)
	l.Setup(c, nil, true)
	defer l.Shutdown()
	a, b := member("a", 9001, KindSession), member("b", 9002, KindSession)
	front := member("f", 9000)
	c.ActorSystem.EventStream.Publish(&cluster.ClusterTopology{Members: []*cluster.Member{front, a, b}})

	got := owners(l, 200)
	if got[front.Address()] != 0 || got[a.Address()] == 0 || got[b.Address()] == 0 || got[a.Address()]+got[b.Address()] != 200 {
		t.Fatalf("owners of 200 sessions: %v, want all on a and b, some on each", got)
	}
	c.ActorSystem.EventStream.Publish(&remote.EndpointTerminatedEvent{Address: a.Address()})
	if got := owners(l, 200); got[b.Address()] != 200 {
		t.Errorf("after a's endpoint terminated: %v, want all 200 on b", got)
	}
	c.ActorSystem.EventStream.Publish(&remote.EndpointConnectedEvent{Address: a.Address()})
	if got := owners(l, 200); got[a.Address()] == 0 {
		t.Errorf("after a reconnected: %v, want a back in placement", got)
	}
	// a is marked down again, then leaves the topology and re-joins as a
	// new member at the same address (a restarted process): the new
	// member is not down.
	c.ActorSystem.EventStream.Publish(&remote.EndpointTerminatedEvent{Address: a.Address()})
	c.ActorSystem.EventStream.Publish(&cluster.ClusterTopology{Members: []*cluster.Member{front, b}})
	a2 := member("a2", 9001, KindSession)
	c.ActorSystem.EventStream.Publish(&cluster.ClusterTopology{Members: []*cluster.Member{front, a2, b}})
	if got := owners(l, 200); got[a2.Address()] == 0 {
		t.Errorf("after a re-joined as a2: %v, want it in placement", got)
	}
	// No member hosts the kind: no owner, and Get says nil at once.
	c.ActorSystem.EventStream.Publish(&cluster.ClusterTopology{Members: []*cluster.Member{front}})
	if pid := l.Get(cluster.NewClusterIdentity("s-1", KindSession)); pid != nil {
		t.Errorf("Get with no host: %v, want nil", pid)
	}
}

// TestLookupConcurrent: lookups while the topology and endpoints change
// (the stock lookup's data race; run with -race).
func TestLookupConcurrent(t *testing.T) {
	l := &Lookup{ActivationTimeout: 100 * time.Millisecond}
	c := testCluster(t, "127.0.0.1:9000", nil, l)
	l.Setup(c, nil, true)
	defer l.Shutdown()
	ms := []*cluster.Member{member("a", 9001, KindSession), member("b", 9002, KindSession), member("c", 9003, KindSession)}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					owners(l, 10)
				}
			}
		}()
	}
	for i := range 200 {
		c.ActorSystem.EventStream.Publish(&cluster.ClusterTopology{Members: ms[:1+i%3]})
		c.ActorSystem.EventStream.Publish(&remote.EndpointTerminatedEvent{Address: ms[i%3].Address()})
		c.ActorSystem.EventStream.Publish(&remote.EndpointConnectedEvent{Address: ms[i%3].Address()})
	}
	close(stop)
	wg.Wait()
}

// TestProviderMembership: two members beating into one SQLite file see
// each other; one that stops beating (its process died) is dropped after
// the TTL; a graceful leave drops at once.
func TestProviderMembership(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const ttl = 600 * time.Millisecond
	pa := &Provider{Store: st, TTL: ttl, Interval: ttl / 6}
	pb := &Provider{Store: st, TTL: ttl, Interval: ttl / 6}
	ca := testCluster(t, "127.0.0.1:9001", pa, &Lookup{}, KindSession)
	cb := testCluster(t, "127.0.0.1:9002", pb, &Lookup{})
	topo := make(chan *cluster.ClusterTopology, 64)
	ca.ActorSystem.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			topo <- t
		}
	})
	waitFor := func(what string, ok func(*cluster.ClusterTopology) bool) *cluster.ClusterTopology {
		t.Helper()
		deadline := time.After(20 * ttl)
		for {
			select {
			case tp := <-topo:
				if ok(tp) {
					return tp
				}
			case <-deadline:
				t.Fatalf("no topology with %s", what)
				return nil
			}
		}
	}
	if err := pa.StartMember(ca); err != nil {
		t.Fatal(err)
	}
	defer pa.Shutdown(true)
	if err := pb.StartMember(cb); err != nil {
		t.Fatal(err)
	}
	tp := waitFor("both members", func(tp *cluster.ClusterTopology) bool { return len(tp.Members) == 2 })
	for _, m := range tp.Members {
		want := []string(nil)
		if m.Id == ca.ActorSystem.ID {
			want = []string{KindSession}
		}
		if fmt.Sprint(m.Kinds) != fmt.Sprint(want) || m.Host != "127.0.0.1" {
			t.Errorf("member %s: host %s kinds %v, want kinds %v (protoactor's topic kind left out)", m.Id, m.Host, m.Kinds, want)
		}
	}
	// b stops beating without leaving (as if killed): dropped after the TTL.
	stopped := time.Now()
	if err := pb.Shutdown(false); err != nil {
		t.Fatal(err)
	}
	tp = waitFor("b dropped", func(tp *cluster.ClusterTopology) bool { return len(tp.Members) == 1 })
	if len(tp.Left) != 1 || tp.Left[0].Id != cb.ActorSystem.ID {
		t.Errorf("left %v, want b", tp.Left)
	}
	t.Logf("a stale member was dropped %s after its last beat (ttl %s)", time.Since(stopped).Round(time.Millisecond), ttl)
	// A graceful leave deletes the row.
	if err := pa.Shutdown(true); err != nil {
		t.Fatal(err)
	}
	if ms, err := st.Members(context.Background(), "t", time.Time{}); err != nil || len(ms) != 1 || ms[0].ID != cb.ActorSystem.ID {
		t.Errorf("rows after a's graceful leave: %v, %v; want only b's stale row", ms, err)
	}
}

// stallingMembers is a members table whose heartbeats wait while stall
// is held: a member whose beats reach the store late (its process was
// stopped, its store was busy).
type stallingMembers struct {
	store.Membership
	stall sync.RWMutex
}

func (s *stallingMembers) Heartbeat(ctx context.Context, m store.Member) error {
	s.stall.RLock()
	defer s.stall.RUnlock()
	return s.Membership.Heartbeat(ctx, m)
}

// TestProviderDroppedWhileAlive: b's heartbeats stall for longer than the
// TTL; a drops b and blocks its ID (protoactor never lets a dropped
// member back). When b's beats land again, b finds it was dropped and
// says so once (OnDropped, with how long it was silent); a, beating all
// along, never does.
func TestProviderDroppedWhileAlive(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Longer than TestProviderMembership's: a must not miss a beat on a
	// loaded machine.
	const ttl = time.Second
	stalling := &stallingMembers{Membership: st}
	droppedA := make(chan time.Duration, 4)
	droppedB := make(chan time.Duration, 4)
	pa := &Provider{Store: st, TTL: ttl, Interval: ttl / 6, OnDropped: func(d time.Duration) { droppedA <- d }}
	pb := &Provider{Store: stalling, TTL: ttl, Interval: ttl / 6, OnDropped: func(d time.Duration) { droppedB <- d }}
	ca := testCluster(t, "127.0.0.1:9001", pa, &Lookup{}, KindSession)
	cb := testCluster(t, "127.0.0.1:9002", pb, &Lookup{}, KindSession)
	topo := make(chan *cluster.ClusterTopology, 64)
	ca.ActorSystem.EventStream.Subscribe(func(ev any) {
		if t, ok := ev.(*cluster.ClusterTopology); ok {
			topo <- t
		}
	})
	waitFor := func(what string, ok func(*cluster.ClusterTopology) bool) {
		t.Helper()
		deadline := time.After(20 * ttl)
		for {
			select {
			case tp := <-topo:
				if ok(tp) {
					return
				}
			case <-deadline:
				t.Fatalf("no topology with %s", what)
			}
		}
	}
	if err := pa.StartMember(ca); err != nil {
		t.Fatal(err)
	}
	defer pa.Shutdown(true)
	if err := pb.StartMember(cb); err != nil {
		t.Fatal(err)
	}
	defer pb.Shutdown(true)
	waitFor("both members", func(tp *cluster.ClusterTopology) bool { return len(tp.Members) == 2 })

	stalling.stall.Lock()
	waitFor("b dropped", func(tp *cluster.ClusterTopology) bool {
		return len(tp.Left) == 1 && tp.Left[0].Id == cb.ActorSystem.ID
	})
	if !ca.Remote.BlockList().IsBlocked(cb.ActorSystem.ID) {
		t.Errorf("a dropped b without blocking its ID: the premise of rejoining under a new one is gone")
	}
	select {
	case d := <-droppedB:
		t.Fatalf("b said it was dropped (silent %s) while its beat was still stalled", d)
	default:
	}
	stalling.stall.Unlock()
	select {
	case d := <-droppedB:
		if d < ttl {
			t.Errorf("b was silent %s by its own count, want at least the TTL %s", d, ttl)
		}
	case <-time.After(20 * ttl):
		t.Fatal("b's beats landed again but it never found it was dropped")
	}
	// Once only, and never for a member that beat in time.
	time.Sleep(2 * ttl)
	select {
	case d := <-droppedB:
		t.Errorf("b said it was dropped a second time (silent %s)", d)
	case d := <-droppedA:
		t.Errorf("a, beating in time, said it was dropped (silent %s)", d)
	default:
	}
}
