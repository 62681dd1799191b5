package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/messages"
)

// RemoteSession is a session grain as a front (odin serve --cluster)
// drives it: a serve.Session whose calls are requests to the grain,
// wherever it runs, and whose bus is fed by a subscriber actor on this
// node. The subscriber re-subscribes when the grain's node goes away
// (which activates the session on a survivor) and the gap becomes one
// resync event. Methods are safe for concurrent use.
type RemoteSession struct {
	n   *Node
	id  string
	bus *events.Bus
	sub *actor.PID

	mu      sync.Mutex
	epoch   int64  // of the last event published (see Position)
	lastSeq uint64 // of the last event published
	pending map[string]messages.ApprovalRequested
	elicits map[string]messages.ElicitationRequested
	closed  bool
}

var (
	_ serve.Session  = (*RemoteSession)(nil)
	_ serve.Accepter = (*RemoteSession)(nil)
	_ serve.Elicitor = (*RemoteSession)(nil)
)

// Attach subscribes to session id's grain (activating it) and returns
// the session once the grain answered.
func (n *Node) Attach(ctx context.Context, id string) (*RemoteSession, error) {
	return n.AttachAfter(ctx, id, 0, 0)
}

// AttachAfter is Attach for a front that followed the session before
// (through a member it has left, see Position): the grain replays the
// events after seq of epoch, or says with one resync event what it
// cannot replay, so the bus misses nothing silently.
func (n *Node) AttachAfter(ctx context.Context, id string, epoch int64, seq uint64) (*RemoteSession, error) {
	rs := &RemoteSession{epoch: epoch, lastSeq: seq, n: n, id: id, bus: events.New(id, nil), pending: map[string]messages.ApprovalRequested{},
		elicits: map[string]messages.ElicitationRequested{}}
	ready := make(chan error, 1)
	props := actor.PropsFromProducer(func() actor.Actor { return &subscriber{rs: rs, ready: ready, epoch: epoch, lastSeq: seq} })
	pid, err := n.System.Root.SpawnNamed(props, "subscriber-"+id+"-"+uuid.NewString()[:8])
	if err != nil {
		return nil, fmt.Errorf("cluster: attach %s: %w", id, err)
	}
	rs.sub = pid
	select {
	case err := <-ready:
		if err != nil {
			n.System.Root.Stop(pid)
			return nil, err
		}
		return rs, nil
	case <-ctx.Done():
		n.System.Root.Stop(pid)
		return nil, fmt.Errorf("cluster: attach %s: %w", id, ctx.Err())
	}
}

// Position is the epoch and sequence number of the last event this
// session published: where AttachAfter goes on.
func (rs *RemoteSession) Position() (epoch int64, seq uint64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.epoch, rs.lastSeq
}

// ID implements serve.Session.
func (rs *RemoteSession) ID() string { return rs.id }

// Bus implements serve.Session: the grain's events as they arrive.
func (rs *RemoteSession) Bus() *events.Bus { return rs.bus }

// Submit implements serve.Session. The input ID is made here, so the
// retries of a request that timed out are recognised by the grain. When
// no grain takes the input within the request timeout, the input is
// reported failed on the bus (serve's Submit has no error to return).
func (rs *RemoteSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	inputID := uuid.NewString()
	um := messages.UserMessage{ID: inputID, Body: body, Mode: mode, At: time.Now()}
	acc, err := rs.SubmitInput(context.Background(), inputID, body, mode)
	if err != nil {
		rs.bus.Publish(messages.Notice{Level: "error", Text: fmt.Sprintf("the input was not accepted: %v", err)})
		rs.bus.Publish(messages.TurnFinished{Result: messages.TurnResult{Input: um, Status: messages.TurnFailed, Answer: err.Error()}})
		return um
	}
	um.ID = acc.MessageID
	return um
}

// Accept implements serve.Accepter: the input goes to the grain under
// key (a client's Idempotency-Key; a new ID when empty), and the grain's
// input ledger answers a key any activation took before as a duplicate.
func (rs *RemoteSession) Accept(ctx context.Context, key, body string, mode messages.Mode) (messages.UserMessage, string, bool, error) {
	mine := key == ""
	if mine {
		key = uuid.NewString()
	}
	acc, err := rs.SubmitInput(ctx, key, body, mode)
	if err != nil {
		return messages.UserMessage{}, "", false, err
	}
	// A key made here was sent by nobody else: a dup is this request's
	// own retry (an attempt whose answer was lost), not a second input.
	dup := acc.Dup && !mine
	return messages.UserMessage{ID: acc.MessageID, Body: body, Mode: mode, At: time.Now()}, acc.State, dup, nil
}

// SubmitInput sends an input with the caller's input ID; a retry with the
// same ID is answered Dup by the grain that took it.
func (rs *RemoteSession) SubmitInput(ctx context.Context, inputID, body string, mode messages.Mode) (*Accepted, error) {
	rs.resume()
	res, err := rs.n.request(ctx, rs.id, &Submit{InputID: inputID, Body: body, Mode: mode})
	if err != nil {
		return nil, err
	}
	acc, ok := res.(*Accepted)
	if !ok {
		return nil, fmt.Errorf("cluster: submit: unexpected answer %T", res)
	}
	return acc, nil
}

// resume re-subscribes a subscriber whose grain passivated.
func (rs *RemoteSession) resume() {
	rs.n.System.Root.Send(rs.sub, &resubscribe{onlyIfDormant: true})
}

// Cancel implements serve.Session.
func (rs *RemoteSession) Cancel(reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), rs.n.cfg.RequestTimeout)
	defer cancel()
	if _, err := rs.n.request(ctx, rs.id, &Cancel{Reason: reason}); err != nil {
		rs.bus.Publish(messages.Notice{Level: "error", Text: fmt.Sprintf("cancel did not reach the session: %v", err)})
	}
}

// Answer implements serve.Session.
func (rs *RemoteSession) Answer(id string, d policy.Decision) error {
	ctx, cancel := context.WithTimeout(context.Background(), rs.n.cfg.RequestTimeout)
	defer cancel()
	_, err := rs.n.request(ctx, rs.id, &Answer{ApprovalID: id, Decision: d})
	return err
}

// Pending implements serve.Session: the approvals asked and not yet
// resolved, as the events told.
func (rs *RemoteSession) Pending() []messages.ApprovalRequested {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return byKey(rs.pending)
}

// AnswerElicitation implements serve.Elicitor: the answer goes to the
// grain, whose session checks it against the server's form; an answer
// that does not fit wraps serve.ErrInvalidAnswer.
func (rs *RemoteSession) AnswerElicitation(id, action string, content map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), rs.n.cfg.RequestTimeout)
	defer cancel()
	_, err := rs.n.request(ctx, rs.id, &AnswerElicitation{ElicitationID: id, Action: action, Content: content})
	return err
}

// PendingElicitations implements serve.Elicitor: the MCP servers'
// requests for input asked and not yet resolved, as the events told.
func (rs *RemoteSession) PendingElicitations() []messages.ElicitationRequested {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return byKey(rs.elicits)
}

// byKey lists m's values in the order of their keys (the requests' IDs),
// so every listing of what is pending reads the same.
func byKey[T any](m map[string]T) []T {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]T, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// Queue implements serve.Session.
func (rs *RemoteSession) Queue(ctx context.Context) (*messages.QueueState, error) {
	return rs.queue(ctx, &QueueRequest{})
}

// Remove implements serve.Session.
func (rs *RemoteSession) Remove(ctx context.Context, id string) (*messages.QueueState, error) {
	return rs.queue(ctx, &RemoveQueued{ID: id})
}

func (rs *RemoteSession) queue(ctx context.Context, msg any) (*messages.QueueState, error) {
	res, err := rs.n.request(ctx, rs.id, msg)
	if err != nil {
		return nil, err
	}
	q, ok := res.(*Queue)
	if !ok {
		return nil, fmt.Errorf("cluster: queue: unexpected answer %T", res)
	}
	return &q.State, nil
}

// Close implements serve.Session: this front stops listening. The grain
// runs on; it passivates itself when idle.
func (rs *RemoteSession) Close(ctx context.Context) error {
	rs.mu.Lock()
	if rs.closed {
		rs.mu.Unlock()
		return nil
	}
	rs.closed = true
	rs.mu.Unlock()
	return rs.n.System.Root.StopFuture(rs.sub).Wait()
}

// setPending replaces the approvals and requests for input pending with
// those the grain's activation waits for now.
func (rs *RemoteSession) setPending(pending []messages.ApprovalRequested, elicits []messages.ElicitationRequested) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	clear(rs.pending)
	for _, a := range pending {
		rs.pending[a.ID] = a
	}
	clear(rs.elicits)
	for _, e := range elicits {
		rs.elicits[e.ID] = e
	}
}

// publish hands an event from the grain to the bus.
func (rs *RemoteSession) publish(ev messages.Event) {
	switch e := ev.(type) {
	case messages.ApprovalRequested:
		rs.mu.Lock()
		rs.pending[e.ID] = e
		rs.mu.Unlock()
	case messages.ApprovalResolved:
		rs.mu.Lock()
		delete(rs.pending, e.ID)
		rs.mu.Unlock()
	case messages.ElicitationRequested:
		rs.mu.Lock()
		rs.elicits[e.ID] = e
		rs.mu.Unlock()
	case messages.ElicitationResolved:
		rs.mu.Lock()
		delete(rs.elicits, e.ID)
		rs.mu.Unlock()
	}
	rs.bus.Publish(ev)
}

// subscriber receives one session's events on the front.
type subscriber struct {
	rs    *RemoteSession
	ready chan error // first subscription's outcome, once

	grain   *actor.PID
	epoch   int64
	lastSeq uint64
	// dormant: the grain passivated; the next request re-subscribes.
	dormant bool
	busy    bool // a Subscribe request is in flight
	attempt int
}

type (
	resubscribe     struct{ onlyIfDormant bool }
	grainStopped    struct{}
	subscribeResult struct {
		res *Subscribed
		err error
	}
)

func (s *subscriber) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		s.subscribe(ctx)
	case *resubscribe:
		if !msg.onlyIfDormant || s.dormant {
			s.dormant = false
			s.subscribe(ctx)
		}
	case *subscribeResult:
		s.onSubscribed(ctx, msg)
	case *anypb.Any:
		s.onEnvelope(ctx, msg)
	case *actor.Terminated:
		if s.grain == nil || !msg.Who.Equal(s.grain) {
			return
		}
		s.grain = nil
		if msg.Why == actor.TerminatedReason_AddressTerminated {
			// Its node died: look it up again, which activates it on a
			// survivor.
			if !s.dormant {
				s.subscribe(ctx)
			}
			return
		}
		// It stopped: passivated (its Passivated message was sent before
		// it stopped, but a system message overtakes the user messages
		// queued here), fenced or moved. Decide after the messages
		// already queued.
		ctx.Send(ctx.Self(), &grainStopped{})
	case *grainStopped:
		if s.grain == nil && !s.dormant {
			s.subscribe(ctx)
		}
	case *actor.Stopping, *actor.Stopped, *actor.Restarting:
	}
}

func (s *subscriber) subscribe(ctx actor.Context) {
	if s.busy {
		return
	}
	s.busy = true
	self, root, n, id := ctx.Self(), ctx.ActorSystem().Root, s.rs.n, s.rs.id
	req := &Subscribe{Address: self.Address, ID: self.Id, LastSeq: s.lastSeq, Epoch: s.epoch}
	go func() {
		res, err := n.request(context.Background(), id, req)
		sr := &subscribeResult{err: err}
		if err == nil {
			if sub, ok := res.(*Subscribed); ok {
				sr.res = sub
			} else {
				sr.err = fmt.Errorf("cluster: subscribe: unexpected answer %T", res)
			}
		}
		root.Send(self, sr)
	}()
}

func (s *subscriber) onSubscribed(ctx actor.Context, msg *subscribeResult) {
	s.busy = false
	if msg.err != nil {
		if s.ready != nil {
			s.ready <- msg.err
			s.ready = nil
			return
		}
		// Keep trying while this front holds the session: a cluster with
		// no worker right now may have one in a moment.
		s.attempt++
		self, root := ctx.Self(), ctx.ActorSystem().Root
		time.AfterFunc(time.Duration(min(s.attempt, 10))*100*time.Millisecond, func() { root.Send(self, &resubscribe{}) })
		return
	}
	s.attempt = 0
	s.rs.setPending(msg.res.Pending, msg.res.Elicitations)
	if s.grain != nil {
		ctx.Unwatch(s.grain)
	}
	s.grain = actor.NewPID(msg.res.Address, msg.res.ID)
	ctx.Watch(s.grain)
	if s.ready != nil {
		s.ready <- nil
		s.ready = nil
	}
}

func (s *subscriber) onEnvelope(ctx actor.Context, env *anypb.Any) {
	msg, err := Decode(env)
	if err != nil {
		ctx.Logger().Warn("cluster: subscriber: dropped a message", "session", s.rs.id, "err", err)
		return
	}
	switch m := msg.(type) {
	case *Event:
		if m.Epoch < s.epoch || (m.Epoch == s.epoch && m.Seq <= s.lastSeq && (m.Type != "resync" || m.Seq == 0)) {
			return // a late or replayed duplicate
		}
		s.epoch, s.lastSeq = m.Epoch, m.Seq
		s.rs.mu.Lock()
		s.rs.epoch, s.rs.lastSeq = m.Epoch, m.Seq
		s.rs.mu.Unlock()
		s.rs.publish(decodeEvent(m))
	case *Passivated:
		if m.Epoch == s.epoch || s.epoch == 0 {
			s.dormant = true
		}
	default:
		ctx.Logger().Warn("cluster: subscriber: unexpected message", "session", s.rs.id, "type", fmt.Sprintf("%T", msg))
	}
}
