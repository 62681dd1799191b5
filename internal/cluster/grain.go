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
	"github.com/odin-code/odin/internal/store"
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
	// Previous is the node whose claim this one replaced ("" for a new
	// session): activations are counted by why they happened.
	Previous string
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
	// classify says why the session is activated here, given the node
	// that held it before (see Node.classify).
	classify func(ctx context.Context, previous string) (string, time.Duration)
}

// sessionGrain is the kind "session": one stored session, claimed at a
// new epoch on activation and run here until it is idle (passivated),
// fenced (another node claimed it), or moved.
type sessionGrain struct {
	o    grainOptions
	id   string
	log  *slog.Logger // with session, node and epoch
	base *slog.Logger // with session and node
	// counted: this activation is in odin_sessions_active.
	counted bool
	sess    *Hosted
	stopBr  context.CancelFunc // stops the bus bridge

	// pending holds requests that came while the session was opening.
	pending []pendingReq

	epoch    int64
	seq      uint64
	ring     []*Event // the last o.replay events, for re-subscribers
	subs     map[string]*actor.PID
	inputs   map[string]*Accepted // by input ID, this activation's answers
	inFlight int
	closing  bool

	// accepts are submits waiting for the ledger, in arrival order;
	// accepting is set while the first of them is being written. One at a
	// time, off the mailbox: the write is a store round trip (on
	// PostgreSQL it may wait for a row lock), which must not hold up the
	// events and requests behind it, and inputs reach the session in the
	// order they came.
	accepts   []pendingSubmit
	accepting bool
}

// pendingSubmit is a Submit waiting for the input ledger.
type pendingSubmit struct {
	sender *actor.PID
	m      *Submit
}

type pendingReq struct {
	sender *actor.PID
	env    *anypb.Any
}

// Messages the grain sends itself.
type (
	opened struct {
		s        *Hosted
		err      error
		reason   string
		failover time.Duration
	}
	busEvent  struct{ env messages.Envelope }
	fencedMsg struct{}
	closedMsg struct{ err error }
	// ledgerDone is the ledger's answer to the first of accepts.
	ledgerDone struct {
		um    messages.UserMessage
		state string
		dup   bool
		err   error
	}
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
	case *ledgerDone:
		g.onLedgerDone(ctx, msg)
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
		g.onStopping(ctx)
	case *actor.Started, *actor.Stopped, *actor.Restarting:
	default:
		g.log.Warn("cluster: session grain: unexpected message", "type", fmt.Sprintf("%T", msg))
	}
}

func (g *sessionGrain) onInit(ctx actor.Context, msg *cluster.ClusterInit) {
	g.id = msg.Identity.Identity
	g.base = g.o.log.With("session", g.id, "node", g.o.node)
	// Epoch 0 until the claim: no write of this activation can land yet.
	g.log = g.base.With("epoch", 0)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	host, node, timeout, classify := g.o.host, g.o.node, g.o.openTimeout, g.o.classify
	// Claiming and opening read and write the store: off the mailbox.
	go func() {
		octx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		s, err := host.Open(octx, g.id, node)
		o := &opened{s: s, err: err, reason: ReasonNew}
		if err == nil && classify != nil {
			o.reason, o.failover = classify(octx, s.Previous)
		}
		root.Send(self, o)
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
	g.log = g.base.With("epoch", g.epoch)
	if msg.reason == ReasonFailover {
		g.log.Info("cluster: session activated", "reason", msg.reason, "previous", msg.s.Previous, "failover_seconds", msg.failover.Seconds())
		failoverSeconds.Observe(msg.failover.Seconds())
	} else {
		g.log.Info("cluster: session activated", "reason", msg.reason, "previous", msg.s.Previous)
	}
	activations.Add(msg.reason, 1)
	sessionsHosted.Add(1)
	g.counted = true
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
	case *AnswerElicitation:
		g.onAnswerElicitation(ctx, sender, m)
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

// onAnswerElicitation hands a front's answer to an MCP server's request
// for input to the session, which checks it against the server's form
// and passes it on without waiting for the server.
func (g *sessionGrain) onAnswerElicitation(ctx actor.Context, sender *actor.PID, m *AnswerElicitation) {
	el, ok := g.sess.Session.(serve.Elicitor)
	if !ok {
		g.reply(ctx, sender, &Failure{Error: fmt.Sprintf("no pending elicitation %s (the session takes no answers)", m.ElicitationID)})
		return
	}
	if err := el.AnswerElicitation(m.ElicitationID, m.Action, m.Content); err != nil {
		g.reply(ctx, sender, &Failure{Error: err.Error(), Invalid: errors.Is(err, serve.ErrInvalidAnswer)})
		return
	}
	g.reply(ctx, sender, &Ack{})
}

// pendingElicitations are the session's requests for input waiting for
// an answer, nil for a session that takes none.
func (g *sessionGrain) pendingElicitations() []messages.ElicitationRequested {
	if el, ok := g.sess.Session.(serve.Elicitor); ok {
		return el.PendingElicitations()
	}
	return nil
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
	if _, ok := g.sess.Session.(serve.Accepter); !ok {
		// A session without an input ledger: duplicates are caught
		// within this activation only.
		um := g.sess.Submit(m.Body, m.Mode)
		acc := &Accepted{InputID: m.InputID, MessageID: um.ID, Epoch: g.epoch}
		g.inputs[m.InputID] = acc
		g.inFlight++
		g.reply(ctx, sender, acc)
		return
	}
	// Counted now, before the session can see it: its turn_finished may
	// come back before the ledger's answer does.
	g.inFlight++
	g.accepts = append(g.accepts, pendingSubmit{sender: sender, m: m})
	g.nextAccept(ctx)
}

// nextAccept writes the first waiting submit into the session's input
// ledger, off the mailbox: the ledger records it under the caller's
// input ID at this activation's epoch before the session runs it, so an
// ID any activation took before (a retry after failover, a client's
// repeated Idempotency-Key) is answered Dup and runs once, and one that
// a dead owner left unfinished is resumed by the next activation.
func (g *sessionGrain) nextAccept(ctx actor.Context) {
	if g.accepting || len(g.accepts) == 0 {
		return
	}
	if g.closing {
		// Not taken here: the caller asks this activation's successor,
		// which takes them in the ledger.
		for _, p := range g.accepts {
			g.inFlight = max(g.inFlight-1, 0)
			g.reply(ctx, p.sender, &Failure{Error: "the session is closing", Fenced: true})
		}
		g.accepts = nil
		return
	}
	g.accepting = true
	a := g.sess.Session.(serve.Accepter)
	m, self, root, timeout := g.accepts[0].m, ctx.Self(), ctx.ActorSystem().Root, g.o.openTimeout
	go func() {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		um, state, dup, err := a.Accept(c, m.InputID, m.Body, m.Mode)
		root.Send(self, &ledgerDone{um: um, state: state, dup: dup, err: err})
	}()
}

func (g *sessionGrain) onLedgerDone(ctx actor.Context, msg *ledgerDone) {
	p := g.accepts[0]
	g.accepts = g.accepts[1:]
	g.accepting = false
	switch {
	case errors.Is(msg.err, store.ErrFenced):
		// A later claim owns the session: the caller asks its successor.
		// This activation stops (the claim's fence watch tells it).
		g.inFlight = max(g.inFlight-1, 0)
		g.reply(ctx, p.sender, &Failure{Error: msg.err.Error(), Fenced: true})
	case msg.err != nil:
		g.inFlight = max(g.inFlight-1, 0)
		g.log.Warn("cluster: the input ledger refused an input", "input", p.m.InputID, "err", msg.err)
		g.reply(ctx, p.sender, &Failure{Error: msg.err.Error()})
	default:
		if msg.dup {
			g.inFlight = max(g.inFlight-1, 0)
		}
		acc := &Accepted{InputID: p.m.InputID, MessageID: msg.um.ID, Epoch: g.epoch, State: msg.state, Dup: msg.dup}
		if !msg.dup {
			g.inputs[p.m.InputID] = acc
		}
		g.reply(ctx, p.sender, acc)
	}
	g.nextAccept(ctx)
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
	g.reply(ctx, sender, &Subscribed{Epoch: g.epoch, Node: g.o.node, Address: self.Address, ID: self.Id, Pending: g.sess.Pending(),
		Elicitations: g.pendingElicitations()})
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
	passivations.Inc()
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
	g.nextAccept(ctx) // answers the submits still waiting
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
func (g *sessionGrain) onStopping(ctx actor.Context) {
	if g.stopBr != nil {
		defer g.stopBr()
	}
	// Submits still waiting for the ledger go to this activation's
	// successor (the one being written may land there as a dup, which
	// the ledger then resumes).
	for _, p := range g.accepts {
		g.reply(ctx, p.sender, &Failure{Error: "the session is moving", Fenced: true})
	}
	g.accepts = nil
	if g.counted {
		g.counted = false
		sessionsHosted.Add(-1)
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
