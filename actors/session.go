package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/messages"
	"github.com/odin-code/odin/tools/tool"
)

// Session runs one Orchestrator in its own actor system. It is the front
// door for the CLI, the REPL and the server: inputs go in with Submit,
// results come out as events on Deps.Bus. Methods are safe for concurrent
// use.
type Session struct {
	ID     string
	deps   *Deps
	system *actor.ActorSystem
	// ownSystem is true when the session started its actor system (and
	// so shuts it down); false when it runs in a shared one.
	ownSystem bool
	orch      *actor.PID
	j         *journal
	// disk counts the Orchestrator's disk work in flight (checkpoint
	// commits, plan writes); Close waits for it.
	disk *sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

// SessionOptions configure NewSession.
type SessionOptions struct {
	// ID of the session; a new one is generated when empty. With a store,
	// the session must already exist there (the caller creates or resumes
	// it); its history is then written as it happens.
	ID string
	// History is the conversation to resume (without a system prompt).
	History []llm.Message
	// System, when set, is a shared actor system the Orchestrator is
	// spawned in (a front end serving many sessions: odin serve, odin
	// acp); the session then stops only its own actors on Close. When nil
	// the session starts an actor system of its own. Sharing one matters
	// because an actor system is not free: protoactor's process registry
	// alone is some 3 MB of maps.
	System *actor.ActorSystem
}

// NewActorSystem is the actor system a session runs in: protoactor's
// logs go to log, and the dead letters of cancelled work (late results
// reaching stopped actors, which is expected) are throttled over a short
// window so that protoactor's throttle timer goroutine is short-lived.
func NewActorSystem(log *slog.Logger) *actor.ActorSystem {
	registryShards.Do(func() { cmap.SHARD_COUNT = 1 })
	return actor.NewActorSystem(
		actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return log }),
		actor.WithDeadLetterThrottleInterval(100*time.Millisecond),
	)
}

// registryShards makes protoactor's process registry cheap. The registry is
// 1024 buckets, each a concurrent map of cmap.SHARD_COUNT (32) shards: every
// actor system allocated 32,768 maps (2.9 MB, 4.5 ms at start). The 1024
// buckets already spread the locks far wider than Odin's actors need, so
// one shard per bucket is enough. protoactor has no option for this; cmap
// reads the count at every access, so it is set once, before the first
// actor system (the only cmap user) exists, and never changed.
var registryShards sync.Once

// NewSession starts an actor system and the session's Orchestrator.
func NewSession(deps *Deps, opts SessionOptions) (*Session, error) {
	if err := deps.validate(); err != nil {
		return nil, err
	}
	id := opts.ID
	if id == "" {
		id = deps.NewID()
	}
	if deps.Locks == nil {
		deps.Locks = &tool.PathLocks{}
	}
	system, own := opts.System, false
	if system == nil {
		system, own = NewActorSystem(logging.Slog(deps.Log.With().Str("component", "protoactor").Str("session", id).Logger())), true
	}
	// The journal's actor is the session's, spawned before the
	// Orchestrator and stopped after it (Close): see journal.
	j := startJournal(system.Root, "journal-"+id, deps.Store, deps.Log)
	var orch atomic.Pointer[actor.PID]
	if j != nil {
		j.report = func(err error) { deps.Bus.Publish(persistenceNotice(err)) }
		// Taken over (deps.Store is a store.Fenced whose claim a later
		// one superseded): the session says so and stops its turn; the
		// Orchestrator refuses later inputs (journal.fencedErr).
		j.onFenced = func(to *TakenOverError) {
			deps.Bus.Publish(messages.SessionFenced{Epoch: to.Epoch, Reason: to.Error()})
			if pid := orch.Load(); pid != nil {
				system.Root.Send(pid, &sessionFenced{reason: to.Error()})
			}
		}
	}
	disk := &sync.WaitGroup{}
	var runs []messages.AgentRun
	if len(opts.History) > 0 {
		// Only a resumed session has runs: a new one is not made to open
		// a read connection (1 ms) to find none.
		runs = loadAgentRuns(deps.Store, id)
	}
	registry := newAgentRuns(runs)
	if len(opts.History) > 0 {
		registry.book.session = loadSessionSpend(deps.Store, id, runs)
	}
	pid, err := system.Root.SpawnNamed(newOrchestratorProps(deps, j, id, opts.History, disk, registry), "orchestrator-"+id)
	if err != nil {
		j.close()
		if own {
			system.Shutdown()
		}
		return nil, fmt.Errorf("actors: start orchestrator: %w", err)
	}
	orch.Store(pid)
	return &Session{ID: id, deps: deps, system: system, ownSystem: own, orch: pid, j: j, disk: disk}, nil
}

// Submit queues an input. It returns at once with the message as sent.
func (s *Session) Submit(body string, mode messages.Mode) messages.UserMessage {
	return s.SubmitImages(body, mode, nil)
}

// SubmitImages queues an input with images attached; a main model that
// takes no images fails the turn saying so, before anything is sent.
func (s *Session) SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	m := messages.UserMessage{ID: s.deps.NewID(), Body: body, Mode: mode, At: s.deps.now(), Images: images}
	s.system.Root.Send(s.orch, &m)
	return m
}

// RunAgent queues a direct task: the named specialist runs with brief,
// without the Orchestrator's model. Its report arrives in the turn's
// TurnFinished event (TurnResult.Report).
func (s *Session) RunAgent(agent, brief string, mode messages.Mode) messages.UserMessage {
	m := messages.UserMessage{ID: s.deps.NewID(), Body: brief, Mode: mode, At: s.deps.now(), Agent: agent}
	s.system.Root.Send(s.orch, &m)
	return m
}

// Cancel cancels the running turn, if any. Queued inputs stay queued.
func (s *Session) Cancel(reason string) {
	s.system.Root.Send(s.orch, &messages.Cancel{Reason: reason})
}

// Queue returns the running input and the queue.
func (s *Session) Queue(ctx context.Context) (*messages.QueueState, error) {
	return s.ask(ctx, &messages.QueueRequest{})
}

// Remove drops a queued input and returns the new queue.
func (s *Session) Remove(ctx context.Context, id string) (*messages.QueueState, error) {
	return s.ask(ctx, &messages.RemoveQueued{ID: id})
}

func (s *Session) ask(ctx context.Context, msg any) (*messages.QueueState, error) {
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	res, err := s.system.Root.RequestFuture(s.orch, msg, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("actors: queue: %w", err)
	}
	qs, ok := res.(*messages.QueueState)
	if !ok {
		return nil, errors.New("actors: queue: unexpected reply")
	}
	return qs, nil
}

// Compact summarises the older part of the history now (the /compact
// command). It fails while a turn is running.
func (s *Session) Compact(ctx context.Context) (*CompactResult, error) {
	timeout := 5 * time.Minute
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	res, err := s.system.Root.RequestFuture(s.orch, &CompactRequest{}, timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("actors: compact: %w", err)
	}
	cr, ok := res.(*CompactResult)
	if !ok {
		return nil, errors.New("actors: compact: unexpected reply")
	}
	return cr, nil
}

// SetModel records model as the session's main model, through the
// session's journal (so through its claim: a session another process took
// over stores nothing), and returns once it is committed; otherwise with
// the write's error, the journal's (a TakenOverError, ErrNotSaved when it
// is broken or closed) or ctx's, and the model may or may not be stored.
// It does not switch the model: the front end that resolves models does.
func (s *Session) SetModel(ctx context.Context, model string) error {
	if err := s.j.brokenErr(); err != nil {
		return err
	}
	done := s.j.setModel(s.ID, model)
	var stopped <-chan struct{}
	if s.j != nil {
		stopped = s.j.stopped
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotSaved, err)
		}
		return nil
	case <-stopped:
		select {
		case err := <-done: // written just before the journal stopped
			if err == nil {
				return nil
			}
		default:
		}
		if err := s.j.fencedErr(); err != nil {
			return err
		}
		return fmt.Errorf("%w: the session was closed before its model was written", ErrNotSaved)
	case <-ctx.Done():
		return fmt.Errorf("actors: set model: %w", ctx.Err())
	}
}

// JournalStats is a snapshot of the session's store writes (queue depth,
// commit latency, failures), for metrics. Zero without a store.
func (s *Session) JournalStats() JournalStats { return s.j.Stats() }

// Close cancels any running turn, stops the Orchestrator and its
// specialists, writes what the journal still holds and shuts the actor
// system down. Later calls return the first call's result.
func (s *Session) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closeErr = s.close(ctx) })
	return s.closeErr
}

// closing tells the Orchestrator that its session is closing: a turn the
// close cancels must not start the next queued input, which would send a
// model request only to cancel it (or, from a fast server, finish it
// while Odin exits).
type closing struct{}

func (s *Session) close(ctx context.Context) error {
	s.system.Root.Send(s.orch, &closing{})
	s.settle(ctx)
	done := make(chan error, 1)
	go func() { done <- s.system.Root.PoisonFuture(s.orch).Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	// The cancelled turn's checkpoint may still be committing off the
	// mailbox: let it finish so that odin undo can restore its files.
	written := make(chan struct{})
	go func() { s.disk.Wait(); close(written) }()
	select {
	case <-written:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	// The journal stops after the Orchestrator, whose last writes (runs
	// abandoned at exit) it still takes, and before the actor system.
	if jerr := s.j.close(); jerr != nil {
		err = errors.Join(err, jerr)
	}
	if s.ownSystem {
		s.system.Shutdown()
	}
	return err
}

// settle cancels the running turn (queued inputs no longer start: see
// closing) and waits until the Orchestrator is idle, so that every turn's end
// (TurnFinished, published only after its history and checkpoint are
// committed off the mailbox) reaches subscribers before the actor is
// stopped. It gives up
// when ctx ends.
func (s *Session) settle(ctx context.Context) {
	cancelled := ""
	for {
		qs, err := s.Queue(ctx)
		if err != nil || qs.Running == nil {
			return
		}
		if qs.Running.ID != cancelled {
			cancelled = qs.Running.ID
			s.Cancel(closeReason)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// persistenceNotice tells the user that the history is not being saved
// and is kept for retry (err), that writes were given up (an ErrNotSaved
// err), or that everything is saved again (nil).
func persistenceNotice(err error) messages.Notice {
	if err == nil {
		return messages.Notice{Level: "info", Text: "the session is being saved again; nothing was lost"}
	}
	if errors.Is(err, ErrNotSaved) {
		// Given up (the store rejected the write), not kept for retry.
		return messages.Notice{Level: "error", Text: fmt.Sprintf("part of the session is lost: %v", err)}
	}
	return messages.Notice{Level: "error", Text: fmt.Sprintf("could not save the session (%v): the turn is kept in memory and retried; free space or fix the database (odin doctor)", err)}
}
