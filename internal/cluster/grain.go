package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/messages"
)

// KindSession is the grain kind of a session; its identity is the
// session ID.
const KindSession = "session"

// Host opens sessions for the session grains of one node.
type Host interface {
	// Open claims the stored session id for node (its epoch goes up by
	// one) and starts it with every write fenced by that claim.
	Open(ctx context.Context, id, node string) (*Hosted, error)
}

// Hosted is a session a grain runs.
type Hosted struct {
	serve.Session
	// Epoch is the claim's epoch.
	Epoch int64
	// Fenced is closed when a write of the session failed with
	// store.ErrFenced: a later claim owns the session, and this one must
	// stop.
	Fenced <-chan struct{}
}

// grainOptions are what every session grain of a node shares.
type grainOptions struct {
	host Host
	node string
	// idle passivates a grain with no turn in flight, no pending approval
	// and no message for this long.
	idle time.Duration
	// openTimeout bounds claiming and opening the session.
	openTimeout time.Duration
	// replay is how many events a grain keeps for re-subscribers.
	replay int
	log    *slog.Logger
	// activated is called once per successful activation (metrics).
	activated func()
}

// sessionGrain is the kind "session": one stored session, claimed at a
// new epoch on activation and run here until it is idle (passivated),
// fenced (another node claimed it), or moved.
type sessionGrain struct {
	o      grainOptions
	id     string
	log    *slog.Logger
	sess   *Hosted
	stopBr context.CancelFunc // stops the bus bridge

	// pending holds requests that came while the session was opening.
	pending []pendingReq

	epoch    int64
	seq      uint64
	ring     []*Event // the last o.replay events, for re-subscribers
	subs     map[string]*actor.PID
	inputs   map[string]*Accepted // by input ID, this activation's
	inFlight int
	closing  bool
}

type pendingReq struct {
	sender *actor.PID
	env    *anypb.Any
}

// Messages the grain sends itself.
type (
	opened struct {
		s   *Hosted
		err error
	}
	busEvent  struct{ env messages.Envelope }
	fencedMsg struct{}
	closedMsg struct{ err error }
)

func newSessionKind(o grainOptions) *cluster.Kind {
	props := actor.PropsFromProducer(func() actor.Actor {
		return &sessionGrain{o: o, log: o.log, subs: map[string]*actor.PID{}, inputs: map[string]*Accepted{}}
	})
	return cluster.NewKind(KindSession, props)
}

func (g *sessionGrain) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *cluster.ClusterInit:
		g.onInit(ctx, msg)
	case *opened:
		g.onOpened(ctx, msg)
	case *anypb.Any:
		if g.sess == nil {
			g.pending = append(g.pending, pendingReq{sender: ctx.Sender(), env: msg})
			return
		}
		g.onRequest(ctx, ctx.Sender(), msg)
	case *busEvent:
		g.onBusEvent(ctx, msg.env)
	case *fencedMsg:
		g.log.Warn("cluster: a later claim owns the session; stopping this activation")
		g.shutdown(ctx, false)
	case *actor.ReceiveTimeout:
		g.onIdle(ctx)
	case *closedMsg:
		if msg.err != nil {
			g.log.Warn("cluster: closing the session", "err", msg.err)
		}
		ctx.Stop(ctx.Self())
	case *actor.Terminated:
		delete(g.subs, msg.Who.String())
	case *actor.Stopping:
		g.onStopping()
	case *actor.Started, *actor.Stopped, *actor.Restarting:
	default:
		g.log.Warn("cluster: session grain: unexpected message", "type", fmt.Sprintf("%T", msg))
	}
}

func (g *sessionGrain) onInit(ctx actor.Context, msg *cluster.ClusterInit) {
	g.id = msg.Identity.Identity
	g.log = g.o.log.With("session", g.id, "node", g.o.node)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	host, node, timeout := g.o.host, g.o.node, g.o.openTimeout
	// Claiming and opening read and write the store: off the mailbox.
	go func() {
		octx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		s, err := host.Open(octx, g.id, node)
		root.Send(self, &opened{s: s, err: err})
	}()
}

func (g *sessionGrain) onOpened(ctx actor.Context, msg *opened) {
	if msg.err != nil {
		g.log.Error("cluster: cannot activate the session", "err", msg.err)
		for _, p := range g.pending {
			g.reply(ctx, p.sender, &Failure{Error: "activate session " + g.id + ": " + msg.err.Error()})
		}
		g.pending = nil
		ctx.Stop(ctx.Self())
		return
	}
	g.sess, g.epoch = msg.s, msg.s.Epoch
	g.log = g.log.With("epoch", g.epoch)
	g.log.Info("cluster: session activated")
	if g.o.activated != nil {
		g.o.activated()
	}
	// Bridge the session's bus into the mailbox: lossless, so every turn
	// event reaches the subscribers in order.
	bctx, stop := context.WithCancel(context.Background())
	g.stopBr = stop
	self, root := ctx.Self(), ctx.ActorSystem().Root
	evs := g.sess.Bus().Subscribe(bctx, 256, true)
	go func() {
		for env := range evs {
			root.Send(self, &busEvent{env: env})
		}
	}()
	go func() {
		select {
		case <-msg.s.Fenced:
			root.Send(self, &fencedMsg{})
		case <-bctx.Done():
		}
	}()
	// Turns a dead owner left unfinished run again here, after the
	// bridge so that their events reach the subscribers.
	if r, ok := g.sess.Session.(serve.Resumer); ok {
		if n := r.Resume(); n > 0 {
			g.inFlight += n
			g.log.Info("cluster: resuming interrupted turns", "turns", n)
		}
	}
	ctx.SetReceiveTimeout(g.o.idle)
	for _, p := range g.pending {
		g.onRequest(ctx, p.sender, p.env)
	}
	g.pending = nil
}

func (g *sessionGrain) reply(ctx actor.Context, to *actor.PID, msg any) {
	if to == nil {
		return
	}
	env, err := Encode(msg)
	if err != nil {
		g.log.Error("cluster: encode reply", "err", err)
		return
	}
	ctx.Send(to, env)
}

func (g *sessionGrain) onRequest(ctx actor.Context, sender *actor.PID, env *anypb.Any) {
	msg, err := Decode(env)
	if err != nil {
		g.reply(ctx, sender, &Failure{Error: err.Error()})
		return
	}
	if g.closing {
		g.reply(ctx, sender, &Failure{Error: "the session is closing", Fenced: true})
		return
	}
	switch m := msg.(type) {
	case *Submit:
		g.onSubmit(ctx, sender, m)
	case *Cancel:
		g.sess.Cancel(m.Reason)
		g.reply(ctx, sender, &Ack{})
	case *Answer:
		if err := g.sess.Answer(m.ApprovalID, m.Decision); err != nil {
			g.reply(ctx, sender, &Failure{Error: err.Error()})
			return
		}
		g.reply(ctx, sender, &Ack{})
	case *QueueRequest:
		g.queue(ctx, sender, func(c context.Context) (*messages.QueueState, error) { return g.sess.Queue(c) })
	case *RemoveQueued:
		g.queue(ctx, sender, func(c context.Context) (*messages.QueueState, error) { return g.sess.Remove(c, m.ID) })
	case *Subscribe:
		g.onSubscribe(ctx, sender, m)
	default:
		g.reply(ctx, sender, &Failure{Error: fmt.Sprintf("a session grain does not take %T", msg)})
	}
}

func (g *sessionGrain) onSubmit(ctx actor.Context, sender *actor.PID, m *Submit) {
	if m.InputID == "" {
		g.reply(ctx, sender, &Failure{Error: "submit without an input ID"})
		return
	}
	if prev, ok := g.inputs[m.InputID]; ok {
		dup := *prev
		dup.Dup = true
		g.reply(ctx, sender, &dup)
		return
	}
	um := g.sess.Submit(m.Body, m.Mode)
	acc := &Accepted{InputID: m.InputID, MessageID: um.ID, Epoch: g.epoch}
	g.inputs[m.InputID] = acc
	g.inFlight++
	g.reply(ctx, sender, acc)
}

// queue answers a queue request off the mailbox: the Orchestrator answers
// it through its own mailbox, which must not wait on this one.
func (g *sessionGrain) queue(ctx actor.Context, sender *actor.PID, f func(context.Context) (*messages.QueueState, error)) {
	timeout, root := g.o.openTimeout, ctx.ActorSystem().Root
	fut := actor.NewFuture(ctx.ActorSystem(), timeout)
	go func() {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		qs, err := f(c)
		var out any = &Failure{Error: fmt.Sprint(err)}
		if err == nil {
			out = &Queue{State: *qs}
		}
		root.Send(fut.PID(), out)
	}()
	ctx.ReenterAfter(fut, func(res any, err error) {
		if err != nil {
			res = &Failure{Error: err.Error()}
		}
		g.reply(ctx, sender, res)
	})
}

func (g *sessionGrain) onSubscribe(ctx actor.Context, sender *actor.PID, m *Subscribe) {
	if m.Address == "" || m.ID == "" {
		g.reply(ctx, sender, &Failure{Error: "subscribe without a subscriber"})
		return
	}
	pid := actor.NewPID(m.Address, m.ID)
	key := pid.String()
	if _, ok := g.subs[key]; !ok {
		g.subs[key] = pid
		ctx.Watch(pid)
	}
	self := ctx.Self()
	g.reply(ctx, sender, &Subscribed{Epoch: g.epoch, Node: g.o.node, Address: self.Address, ID: self.Id})
	// Catch the subscriber up: the events after its last one when this
	// activation still holds them; one resync when it missed events it
	// cannot get (a lost activation's, or more than the ring holds),
	// followed, for a subscriber of an earlier activation, by every event
	// of this one (a request may have reached it before the subscriber
	// did).
	complete := len(g.ring) == 0 || g.ring[0].Seq == 1
	switch {
	case m.Epoch == 0 && m.LastSeq == 0:
		// A new subscriber: from now on.
	case m.Epoch == g.epoch && m.LastSeq >= g.seq:
	case m.Epoch == g.epoch && len(g.ring) > 0 && g.ring[0].Seq <= m.LastSeq+1:
		g.replay(ctx, pid, m.LastSeq)
	case m.Epoch != g.epoch && complete:
		g.resync(ctx, pid, 0, 0)
		g.replay(ctx, pid, 0)
	default:
		dropped := 0
		if m.Epoch == g.epoch {
			dropped = int(g.seq - min(m.LastSeq, g.seq))
		}
		g.resync(ctx, pid, g.seq, dropped)
	}
}

// resync tells pid it missed events, as event seq of this epoch.
func (g *sessionGrain) resync(ctx actor.Context, pid *actor.PID, seq uint64, dropped int) {
	ev, err := encodeEvent(messages.Envelope{Session: g.id, Time: time.Now(), Event: messages.Resync{Dropped: dropped}}, seq, g.epoch)
	if err == nil {
		g.send(ctx, pid, ev)
	}
}

// replay sends pid the held events after seq.
func (g *sessionGrain) replay(ctx actor.Context, pid *actor.PID, after uint64) {
	for _, ev := range g.ring {
		if ev.Seq > after {
			g.send(ctx, pid, ev)
		}
	}
}

func (g *sessionGrain) send(ctx actor.Context, to *actor.PID, ev *Event) {
	env, err := Encode(ev)
	if err != nil {
		g.log.Error("cluster: encode event", "err", err)
		return
	}
	ctx.Send(to, env)
}

func (g *sessionGrain) onBusEvent(ctx actor.Context, env messages.Envelope) {
	switch env.Event.(type) {
	case messages.TurnFinished, messages.InputRemoved:
		g.inFlight = max(g.inFlight-1, 0)
	}
	g.seq++
	ev, err := encodeEvent(env, g.seq, g.epoch)
	if err != nil {
		g.log.Error("cluster: event", "err", err)
		return
	}
	g.ring = append(g.ring, ev)
	if n := len(g.ring); n > g.o.replay+g.o.replay/4 {
		g.ring = append(g.ring[:0:0], g.ring[n-g.o.replay:]...)
	}
	for _, pid := range g.subs {
		g.send(ctx, pid, ev)
	}
}

// onIdle passivates the grain when nothing is running: its session is
// closed (the store holds it) and the grain stops; the next request
// activates it again, here or on the member that then owns it.
func (g *sessionGrain) onIdle(ctx actor.Context) {
	if g.sess == nil || g.closing {
		return
	}
	if g.inFlight > 0 || len(g.sess.Pending()) > 0 {
		// protoactor disarms the timer when it fires: arm it again for
		// when the turn (or the approval) is over.
		ctx.SetReceiveTimeout(g.o.idle)
		return
	}
	g.log.Info("cluster: session idle; passivating")
	for _, pid := range g.subs {
		g.reply(ctx, pid, &Passivated{Epoch: g.epoch})
	}
	g.shutdown(ctx, true)
}

// shutdown closes the session off the mailbox, then stops the grain.
func (g *sessionGrain) shutdown(ctx actor.Context, graceful bool) {
	if g.closing {
		return
	}
	g.closing = true
	ctx.SetReceiveTimeout(0)
	s, self, root, timeout := g.sess, ctx.Self(), ctx.ActorSystem().Root, g.o.openTimeout
	if s == nil {
		ctx.Stop(self)
		return
	}
	if !graceful {
		// A fenced session's writes all fail: cancel at once rather than
		// let a turn run on that nobody will see.
		s.Cancel("the session moved to another node")
	}
	go func() {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err := s.Close(c)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("close did not finish within %s: %w", timeout, err)
		}
		root.Send(self, &closedMsg{err: err})
	}()
}

// onStopping closes a session still open (the node is shutting down, or
// the grain moved): bounded, since the placement actor waits for it.
func (g *sessionGrain) onStopping() {
	if g.stopBr != nil {
		defer g.stopBr()
	}
	if g.sess == nil || g.closing {
		return
	}
	g.closing = true
	c, cancel := context.WithTimeout(context.Background(), g.o.openTimeout)
	defer cancel()
	if err := g.sess.Close(c); err != nil {
		g.log.Warn("cluster: closing the session on stop", "err", err)
	}
}
