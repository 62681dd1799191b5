package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/odin-code/odin/internal/store"
)

// Provider is protoactor's ClusterProvider over the store's members
// table: a member upserts its row every Interval, and every Interval
// reads back the members whose heartbeat is younger than TTL and hands
// them to the member list, which computes joins and leaves. A node whose
// process died stops beating and drops out after TTL; the lookup drops
// it sooner, as soon as its endpoint terminates (see Lookup).
type Provider struct {
	Store store.Membership
	// TTL is how old a heartbeat may be before its member is dropped.
	TTL time.Duration
	// Interval is the time between heartbeats (and reads); TTL/4 or less
	// keeps a member through a few slow writes.
	Interval time.Duration
	Log      *slog.Logger
	now      func() time.Time // the clock, for tests

	// Advertise are kinds the member announces besides its grain kinds
	// (KindSpecialist: it hosts remote specialists, which are not grains).
	Advertise []string

	// OnDropped, when set, is called once when this member finds that
	// its beats stopped for TTL or longer while it lived (its process was
	// stopped, its store or its machine too slow): the other members have
	// dropped it by then, and protoactor blocks a member it dropped for
	// good, so it cannot come back under this ID. The node rejoins under
	// a new one (see Node.Dropped).
	OnDropped func(silent time.Duration)

	mu     sync.Mutex
	self   store.Member
	member bool
	stop   context.CancelFunc
	done   chan struct{}
	// lastBeat is when the last heartbeat that reached the store was
	// taken (this member's clock); dropped is set once OnDropped ran.
	lastBeat time.Time
	dropped  bool
}

var _ cluster.ClusterProvider = (*Provider)(nil)

// StartMember implements cluster.ClusterProvider: beat and watch.
func (p *Provider) StartMember(c *cluster.Cluster) error { return p.start(c, true) }

// StartClient implements cluster.ClusterProvider: watch only.
func (p *Provider) StartClient(c *cluster.Cluster) error { return p.start(c, false) }

func (p *Provider) start(c *cluster.Cluster, member bool) error {
	if p.Store == nil || p.TTL <= 0 || p.Interval <= 0 || p.Interval >= p.TTL {
		return fmt.Errorf("cluster: provider: need a store and 0 < interval (%s) < ttl (%s)", p.Interval, p.TTL)
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	host, portText, err := net.SplitHostPort(c.ActorSystem.Address())
	if err != nil {
		return fmt.Errorf("cluster: provider: the actor system's address %q: %w", c.ActorSystem.Address(), err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("cluster: provider: port %q: %w", portText, err)
	}
	var kinds []string
	// The configured kinds: the activated ones exist only once
	// StartMember has begun, and protoactor adds its topic kind there.
	for k := range c.Config.Kinds {
		// protoactor registers its pub-sub topic kind on every member;
		// Odin places no topics, and advertising it would make every node
		// look like a host.
		if k != cluster.TopicActorKind {
			kinds = append(kinds, k)
		}
	}
	kinds = append(kinds, p.Advertise...)
	slices.Sort(kinds)
	now := p.now()
	p.mu.Lock()
	p.self = store.Member{Cluster: c.Config.Name, ID: c.ActorSystem.ID, Host: host, Port: port, Kinds: kinds, StartedAt: now}
	p.member = member
	ctx, stop := context.WithCancel(context.Background())
	p.stop, p.done = stop, make(chan struct{})
	p.mu.Unlock()
	// The first beat and read happen before StartMember returns, so a node
	// that returns from Start sees the cluster as it is.
	if err := p.tick(ctx, c); err != nil {
		stop()
		close(p.done)
		return err
	}
	go p.loop(ctx, c)
	return nil
}

func (p *Provider) loop(ctx context.Context, c *cluster.Cluster) {
	defer close(p.done)
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := p.tick(ctx, c); err != nil && ctx.Err() == nil {
			p.Log.Warn("cluster: membership", "err", err)
		}
		// Rows of members long gone are deleted now and then, so the
		// table does not grow with every restart.
		if n%100 == 0 {
			if _, err := p.Store.PruneMembers(ctx, p.self.Cluster, p.now().Add(-10*p.TTL-time.Minute)); err != nil && ctx.Err() == nil {
				p.Log.Warn("cluster: pruning members", "err", err)
			}
		}
	}
}

// tick beats (a member) and publishes the members that are alive.
func (p *Provider) tick(ctx context.Context, c *cluster.Cluster) error {
	p.mu.Lock()
	self, member := p.self, p.member
	p.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, p.TTL)
	defer cancel()
	now := p.now()
	if member {
		self.Heartbeat = now
		err := p.Store.Heartbeat(wctx, self)
		if ctx.Err() != nil {
			return err // leaving: not dropped
		}
		// The row held lastBeat until this beat landed: from lastBeat+TTL
		// on, a member reading the table did not see this one.
		p.checkDropped(p.now())
		if err != nil {
			return err
		}
		p.noteBeat(now)
	}
	rows, err := p.Store.Members(wctx, self.Cluster, now.Add(-p.TTL))
	if err != nil {
		return err
	}
	ms := make(cluster.Members, 0, len(rows))
	for _, r := range rows {
		ms = append(ms, &cluster.Member{Id: r.ID, Host: r.Host, Port: int32(r.Port), Kinds: r.Kinds})
	}
	c.MemberList.UpdateClusterTopology(ms)
	return nil
}

// checkDropped calls OnDropped once when, at time at, the store has held
// no beat of this member younger than TTL: any member that read the
// table since lastBeat+TTL dropped this one.
func (p *Provider) checkDropped(at time.Time) {
	p.mu.Lock()
	last, id := p.lastBeat, p.self.ID
	silent := at.Sub(last)
	fire := !last.IsZero() && silent >= p.TTL && !p.dropped && p.OnDropped != nil
	if fire {
		p.dropped = true
	}
	p.mu.Unlock()
	if fire {
		p.Log.Warn("cluster: this member's heartbeats stopped for longer than the TTL: the cluster has dropped it",
			"member", id, "silent_seconds", silent.Seconds(), "ttl", p.TTL.String())
		p.OnDropped(silent)
	}
}

// noteBeat records a beat that reached the store.
func (p *Provider) noteBeat(beat time.Time) {
	p.mu.Lock()
	p.lastBeat = beat
	p.mu.Unlock()
}

// Shutdown implements cluster.ClusterProvider: stop beating and, when
// graceful, delete this member's row so the others drop it at once.
func (p *Provider) Shutdown(graceful bool) error {
	p.mu.Lock()
	stop, done, self, member := p.stop, p.done, p.self, p.member
	p.stop = nil
	p.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-done
	if !graceful || !member {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.TTL)
	defer cancel()
	return p.Store.LeaveCluster(ctx, self.Cluster, self.ID)
}
