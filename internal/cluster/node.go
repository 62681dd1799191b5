package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/internal/store"
)

// Config configures a node.
type Config struct {
	// Name is the cluster's name: nodes of one name in one store form
	// one cluster.
	Name string
	// Store holds the members table.
	Store store.Membership
	// Bind is the host the node's remote listens on; Advertise the host
	// other nodes reach it at (Bind when empty). Port 0 picks a free one.
	Bind      string
	Advertise string
	Port      int
	// Host opens sessions; nil makes a node that hosts none (odin serve
	// --host-sessions=false).
	Host Host
	// TTL, Heartbeat: see Provider. ActivationTimeout: see Lookup.
	TTL               time.Duration
	Heartbeat         time.Duration
	ActivationTimeout time.Duration
	// RequestTimeout bounds one request to a grain, retries included.
	RequestTimeout time.Duration
	// Idle passivates a session grain after this long without work.
	Idle time.Duration
	// TLS, when set, makes the wire mutual TLS; nil leaves it plaintext
	// (the caller allows that on loopback only).
	TLS *TLSFiles
	Log *slog.Logger

	// Specialists, when set, makes the node host remote specialists
	// (KindSpecialist) in trees under WorkDir (see
	// docs/remote-specialists.md).
	Specialists SpecialistDeps
	WorkDir     string
}

// Defaults fills the zero durations with what the spike found to work
// on one loaded machine.
func (c *Config) Defaults() {
	if c.TTL <= 0 {
		c.TTL = 3 * time.Second
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = c.TTL / 5
	}
	if c.ActivationTimeout <= 0 {
		c.ActivationTimeout = 5 * time.Second
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 15 * time.Second
	}
	if c.Idle <= 0 {
		c.Idle = 10 * time.Minute
	}
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
	if c.Advertise == "" {
		c.Advertise = c.Bind
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Node is one member of an Odin cluster.
type Node struct {
	cfg      Config
	System   *actor.ActorSystem
	Cluster  *cluster.Cluster
	lookup   *Lookup
	provider *Provider
	// activations counts session grains activated on this node.
	activations atomic.Int64

	specs      *specialists
	workspaces *Workspaces
	// dropped is closed when the cluster dropped this live member (see
	// Dropped).
	dropped chan struct{}
}

// Start joins the cluster: it starts an actor system with a remote on
// Bind:Port, the session kind when cfg.Host is set, the members-table
// provider and Odin's lookup. It returns once this node's first
// heartbeat is written and the members are read.
func Start(cfg Config) (_ *Node, err error) {
	cfg.Defaults()
	if cfg.Name == "" || cfg.Store == nil {
		return nil, errors.New("cluster: a node needs a cluster name and a store")
	}
	var ropts []remote.ConfigOption
	if cfg.TLS != nil {
		if ropts, err = cfg.TLS.remoteOptions(); err != nil {
			return nil, err
		}
	}
	port := cfg.Port
	if port == 0 {
		// The remote advertises host:port as given, so the port must be
		// known before it starts.
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Bind, "0"))
		if err != nil {
			return nil, fmt.Errorf("cluster: pick a port on %s: %w", cfg.Bind, err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	if cfg.Specialists != nil && cfg.WorkDir == "" {
		return nil, errors.New("cluster: a node that hosts specialists needs a work directory")
	}
	n := &Node{cfg: cfg}
	n.specs = &specialists{n: n}
	// Odin's actor system constructor: it sizes protoactor's registry
	// shards once for the process, which must happen before any system.
	sys := actors.NewActorSystem(cfg.Log.With("component", "protoactor"))
	n.System = sys
	n.dropped = make(chan struct{})
	n.provider = &Provider{Store: cfg.Store, TTL: cfg.TTL, Interval: cfg.Heartbeat, Log: cfg.Log,
		OnDropped: func(time.Duration) { close(n.dropped) }}
	if cfg.Specialists != nil {
		// Started before the member is announced, so no task finds it
		// missing.
		n.workspaces = &Workspaces{Dir: cfg.WorkDir}
		host := &specialistHost{ws: n.workspaces, deps: cfg.Specialists}
		props := actor.PropsFromProducer(func() actor.Actor { return host },
			actor.WithSupervisor(actor.NewOneForOneStrategy(0, time.Second, func(any) actor.Directive { return actor.StopDirective })))
		if _, err := sys.Root.SpawnNamed(props, specialistHostName); err != nil {
			sys.Shutdown()
			return nil, fmt.Errorf("cluster: start the specialist host: %w", err)
		}
		n.provider.Advertise = []string{KindSpecialist}
	}
	n.lookup = &Lookup{ActivationTimeout: cfg.ActivationTimeout}
	ropts = append(ropts, remote.WithAdvertisedHost(net.JoinHostPort(cfg.Advertise, strconv.Itoa(port))))
	rc := remote.Configure(cfg.Bind, port, ropts...)
	var opts []cluster.ConfigOption
	if cfg.Host != nil {
		opts = append(opts, cluster.WithKinds(newSessionKind(grainOptions{
			host: cfg.Host, node: sys.ID, idle: cfg.Idle, openTimeout: max(cfg.ActivationTimeout, 30*time.Second),
			replay: 1024, log: cfg.Log, activated: func() { n.activations.Add(1) }, classify: n.classify,
		})))
	}
	// The members table is the membership (TTL, then fenced claims):
	// protoactor's own gossip heartbeat would block a member whose
	// gossip went unanswered for 20 s, for good, though it is alive and
	// beating. A worker busy with 1,000 turns, or the front driving
	// them, on a loaded machine did (the fleet benchmark), and every
	// session on it was lost until it restarted.
	opts = append(opts, cluster.WithRequestTimeout(cfg.RequestTimeout), cluster.WithHeartbeatExpiration(time.Duration(math.MaxInt64)))
	cc := cluster.Configure(cfg.Name, n.provider, n.lookup, rc, opts...)
	n.Cluster = cluster.New(sys, cc)
	// StartMember panics where it could have returned an error (a port
	// taken, the provider's first heartbeat failing).
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cluster: start member: %v", r)
			sys.Shutdown()
		}
	}()
	n.Cluster.StartMember()
	return n, nil
}

// Dropped is closed when this node finds that the cluster dropped it
// while it lived: its heartbeats reached the store later than the TTL
// (its process was stopped, or its store or machine was too slow). The
// other members block a member they dropped for good (protoactor's
// block list), so this node can no longer reach them nor be reached: its
// owner stops it and starts a new node, which joins under a new member
// ID. Its sessions need no hand-over: the members that took them over
// claimed them at a later epoch, so every write of this node's
// activations of them is refused (store.ErrFenced) and those
// activations stop.
func (n *Node) Dropped() <-chan struct{} { return n.dropped }

// ID is the node's member ID.
func (n *Node) ID() string { return n.System.ID }

// Address is where other nodes reach this one.
func (n *Node) Address() string { return n.System.Address() }

// Activations is how many session grains this node activated.
func (n *Node) Activations() int64 { return n.activations.Load() }

// Members returns the IDs of the members this node sees, hosts of
// sessions first.
func (n *Node) Members() []*cluster.Member {
	n.lookup.mu.RLock()
	defer n.lookup.mu.RUnlock()
	return append([]*cluster.Member(nil), n.lookup.members...)
}

// Owner returns the address of the node that hosts session id now.
func (n *Node) Owner(id string) string {
	return n.lookup.Owner(cluster.NewClusterIdentity(id, KindSession))
}

// Stop leaves the cluster: the session grains here close their sessions,
// the member row is deleted, the remote stops.
func (n *Node) Stop() {
	n.lookup.Shutdown()
	if err := n.provider.Shutdown(true); err != nil {
		n.cfg.Log.Warn("cluster: leaving", "err", err)
	}
	n.Cluster.Remote.Shutdown(true)
	n.System.Shutdown()
	if n.workspaces != nil {
		n.workspaces.Close()
	}
}

// request sends msg to session id's grain and decodes the answer; a
// Failure answer becomes its error. It retries until RequestTimeout (or
// ctx) ends: when no member hosts sessions yet, when the grain's node
// died (its PID is dropped from the cache and the session looked up
// again, which activates it on a survivor), when the grain passivated or
// is closing. An attempt to a node whose endpoint terminates is given up
// at once rather than waited out: the request may have reached the grain
// or not, so requests are at least once (Submit carries an input ID).
func (n *Node) request(ctx context.Context, id string, msg any) (any, error) {
	env, err := Encode(msg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.RequestTimeout)
	defer cancel()
	began := time.Now()
	defer func() { requestSeconds.Observe(time.Since(began).Seconds()) }()
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				if last == nil {
					last = ctx.Err()
				}
				return nil, fmt.Errorf("cluster: request to session %s: %w (after %d attempts)", id, last, attempt)
			case <-time.After(time.Duration(min(attempt*20, 200)) * time.Millisecond):
			}
		}
		pid := n.pid(id)
		if pid == nil {
			last = errors.New("no member hosts the session now")
			continue
		}
		res, err := n.ask(ctx, pid, env)
		if err != nil {
			n.Cluster.PidCache.RemoveByValue(id, KindSession, pid)
			last = err
			continue
		}
		reply, ok := res.(*anypb.Any)
		if !ok {
			return nil, fmt.Errorf("cluster: request to session %s: unexpected answer %T", id, res)
		}
		out, err := Decode(reply)
		if err != nil {
			return nil, err
		}
		if f, ok := out.(*Failure); ok {
			if f.Fenced {
				// The activation that answered is closing: the next
				// lookup finds (or makes) its successor.
				n.Cluster.PidCache.RemoveByValue(id, KindSession, pid)
				last = f.Err()
				continue
			}
			return nil, f.Err()
		}
		return out, nil
	}
}

// pid returns session id's grain: cached, or looked up (activating it).
func (n *Node) pid(id string) *actor.PID {
	if pid, ok := n.Cluster.PidCache.Get(id, KindSession); ok && pid != nil {
		if !n.lookup.AddressDown(pid.Address) {
			return pid
		}
		n.Cluster.PidCache.RemoveByValue(id, KindSession, pid)
	}
	pid := n.lookup.Get(cluster.NewClusterIdentity(id, KindSession))
	if pid != nil {
		n.Cluster.PidCache.Set(id, KindSession, pid)
	}
	return pid
}

// ask sends env to pid and waits for the answer, giving up when ctx ends
// or pid's node is found dead meanwhile.
func (n *Node) ask(ctx context.Context, pid *actor.PID, env *anypb.Any) (any, error) {
	wait := n.cfg.RequestTimeout
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	if wait <= 0 {
		return nil, ctx.Err()
	}
	fut := n.System.Root.RequestFuture(pid, env, wait)
	type result struct {
		res any
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := fut.Result()
		done <- result{res, err}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.res, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
			if n.lookup.AddressDown(pid.Address) {
				return nil, fmt.Errorf("the node at %s is gone", pid.Address)
			}
		}
	}
}
