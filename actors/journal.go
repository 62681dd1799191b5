package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// journal writes a session's history to the store in order, off the
// actors' mailboxes: actors enqueue writes and never wait for the disk.
// The writer is an actor (journalActor) spawned for the session in its
// actor system, whose mailbox is the queue; the *journal is the handle
// every writer holds (the Orchestrator, its specialists, a model call's
// stream), safe for concurrent use. What is queued is written in one
// transaction when the store can batch (each write in its own savepoint),
// else write by write, in a goroutine whose outcome comes back to the
// actor as a message, so the actor's mailbox never waits for the disk;
// either way a kill -9 loses at most what was still queued, and the store
// repairs tool calls left without a result. A nil *journal does nothing.
//
// No write is ever dropped for failing: a failed or timed-out attempt
// puts the write back at the head of the queue, with everything after it,
// and tries again with backoff, so the stored history is always a prefix
// of the live one — never a tool call without its result. A write the
// store rejects as such (store.ErrInvalid...) is the only one given up,
// and it is counted, logged and reported.
//
// barrier is how a turn's end waits for its history: it answers once
// everything queued before it is committed. When writes keep failing
// (policy: soon for a full disk or a read-only or damaged file, after
// minutes for a busy database) the journal is broken: barriers answer
// ErrNotSaved at once and the session refuses new turns, while the writes
// stay queued and retried; the first commit that succeeds heals it. What
// could still not be written at close is close's error (ErrNotSaved).
//
// A write through a claim another process superseded (store.ErrFenced) is
// the exception to all of this: it is never retried, since it can only
// fail the same way. The journal stops at once: it drops what is queued,
// answers every barrier with a TakenOverError, tells onFenced, and writes
// nothing more.
//
// The actor is not a protoactor child of the Orchestrator, on purpose:
// protoactor stops a parent's children — when the parent stops, and when
// its supervisor restarts it after a panic — with a system message that
// overtakes their queued user messages, so a child journal would drop
// the writes still in its mailbox: those the Orchestrator makes while it
// stops (runs abandoned at exit), or a whole turn's on a restart. The
// session owns it instead: NewSession spawns it (supervised by the actor
// system's guardian; a restart keeps its queue, which lives outside the
// actor's incarnation) before the Orchestrator, and Session.Close stops it
// after the Orchestrator has stopped, once everything queued is written.
type journal struct {
	st  store.Store
	log zerolog.Logger
	// report, if set, is told of a write failure (once per episode), of
	// writes given up, and of the recovery (nil). It must not block.
	report func(error)
	// policy is the retry schedule; set before the first write.
	policy journalPolicy
	// onFenced, if set, is told once that the session's claim was
	// superseded. It must not block.
	onFenced func(*TakenOverError)

	root *actor.RootContext
	pid  *actor.PID
	// stopped is closed once the actor has stopped: closed, or fenced.
	stopped chan struct{}

	// mu guards the books below, which writers and the session read
	// without a round trip through the actor. A message to the actor is
	// sent holding mu, so that setting closed or fenced under mu orders
	// every entry sent before it ahead of the actor's own marker.
	mu      sync.Mutex
	closed  bool
	fenced  error     // ErrNotSaved and a TakenOverError, once fenced
	failing error     // the current episode's latest error, nil when healthy
	since   time.Time // when the current episode began
	broken  error     // ErrNotSaved wrapping failing, once it lasted too long
	lost    int       // writes given up on
	lastErr error     // the error of the last write given up on
	// mailed counts entries sent to the actor it has not received yet;
	// held those it received and has not finished with (its queue and
	// the batch being written).
	mailed, held int
	// lostSeen is lost when a barrier last passed.
	lostSeen int
	stats    JournalStats
}

// JournalStats is a snapshot of a session journal, for metrics.
type JournalStats struct {
	// Queued is the number of writes waiting for the store.
	Queued int
	// Failing is true while the last attempt to write failed; Broken
	// while the failure has lasted long enough that turns are told their
	// history is not saved.
	Failing, Broken bool
	// Commits counts committed attempts; Retries failed ones.
	Commits, Retries int64
	// LastCommit is how long the last committed attempt took, waiting
	// for the store's writer included.
	LastCommit time.Duration
	// Lost counts writes given up (rejected by the store, or still
	// failing at close).
	Lost int
}

// ErrNotSaved: part of the session's history could not be written to the
// store (Session.Close wraps it with the cause; a turn's result carries it
// in NotSaved).
var ErrNotSaved = errors.New("the session could not be saved")

// TakenOverError: another process claimed the session (store.Claim), so
// this one's claim is fenced and the session stopped here: nothing more
// it does is stored. It wraps the store's ErrFenced.
type TakenOverError struct {
	// Epoch is the epoch of the claim that owns the session now; 0 when
	// the session was deleted.
	Epoch int64
	Err   error
}

func (e *TakenOverError) Error() string {
	if e.Epoch == 0 {
		return "session deleted by another process; this session is stopped"
	}
	return fmt.Sprintf("session taken over by another process (epoch %d); this session is stopped", e.Epoch)
}

func (e *TakenOverError) Unwrap() error { return e.Err }

// takenOver is the TakenOverError of a fenced write.
func takenOver(err error) *TakenOverError {
	t := &TakenOverError{Err: err}
	var fe *store.FencedError
	if errors.As(err, &fe) {
		t.Epoch = fe.Current
	}
	return t
}

// journalPolicy is how a journal retries a failed write.
type journalPolicy struct {
	// first and most are the backoff between attempts: doubling from
	// first, capped at most.
	first, most time.Duration
	// attempt is the deadline of one attempt (waiting for the store's
	// single writer connection included).
	attempt time.Duration
	// lasting is how long a failure that needs someone to act (a full
	// disk, a read-only or damaged database) is retried before the
	// journal is broken; transient is the same for a database that is
	// busy or an attempt that ran out of time, which load explains.
	lasting, transient time.Duration
}

var defaultJournalPolicy = journalPolicy{
	first:     50 * time.Millisecond,
	most:      2 * time.Second,
	attempt:   30 * time.Second,
	lasting:   2 * time.Second,
	transient: 2 * time.Minute,
}

// patience is how long a failure like err may last before the journal is
// broken.
func (p journalPolicy) patience(err error) time.Duration {
	if store.Transient(err) {
		return p.transient
	}
	return p.lasting
}

// startJournal spawns a session's journal actor in root's actor system,
// named after name. It returns nil without a store.
func startJournal(root *actor.RootContext, name string, st store.Store, log zerolog.Logger) *journal {
	if st == nil {
		return nil
	}
	j := &journal{st: st, log: log, policy: defaultJournalPolicy, root: root, stopped: make(chan struct{})}
	a := &journalActor{j: j}
	// The producer hands out the same actor: its queue outlives a
	// restart by the supervisor.
	j.pid = root.SpawnPrefix(actor.PropsFromProducer(func() actor.Actor { return a }), name)
	return j
}

// journalEntry is one queued write, or a barrier. A reading entry runs on
// its own, once everything queued before it is committed: it may read
// through the store's read connections, which do not see a batch before
// its commit. A barrier writes nothing: it is answered (nil) once
// everything queued before it is committed, or with the error that
// prevents it.
type journalEntry struct {
	fn      func(context.Context, store.Store) error
	reading bool
	barrier chan<- error
}

// The journal actor's own messages.
type (
	// journalFlush starts a batch with what the actor received before it.
	journalFlush struct{}
	// journalWritten is the outcome of a batch written off the mailbox:
	// what is left to retry and why (nil when all is done with).
	journalWritten struct {
		pending []journalEntry
		err     error
		took    time.Duration
	}
	// journalRetry ends a backoff; gen tells a stale timer's.
	journalRetry struct{ gen int }
	// journalClose follows every entry sent before close.
	journalClose struct{}
	// journalFenced follows every entry sent before the journal was
	// fenced.
	journalFenced struct{}
)

// do enqueues a write. Writes run in the order they were enqueued.
func (j *journal) do(fn func(context.Context, store.Store) error) {
	j.enqueue(journalEntry{fn: fn})
}

// afterWrites enqueues fn to run once every write queued before it is
// committed, never batched with others: fn may read what they wrote.
func (j *journal) afterWrites(fn func(context.Context, store.Store) error) {
	j.enqueue(journalEntry{fn: fn, reading: true})
}

// barrier returns a channel that receives nil once every write queued
// before this call is committed, or an ErrNotSaved error when the journal
// is broken or closed first. It never blocks; the channel receives
// exactly once. A nil journal (no store) answers nil at once.
func (j *journal) barrier() <-chan error {
	ch := make(chan error, 1)
	if j == nil {
		ch <- nil
		return ch
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.fenced != nil:
		ch <- j.fenced
	case j.broken != nil:
		ch <- j.broken
	case j.closed:
		ch <- fmt.Errorf("%w: the session was closed before its history was written", ErrNotSaved)
	case j.mailed == 0 && j.held == 0 && j.failing == nil:
		// Nothing queued nor being written: all is committed.
		ch <- j.passedLocked()
	default:
		j.sendLocked(&journalEntry{barrier: ch})
	}
	return ch
}

// brokenErr is the ErrNotSaved error of a broken journal, nil when the
// journal is healthy or only retrying.
func (j *journal) brokenErr() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.broken
}

// Stats returns a snapshot of the journal's queue and writes.
func (j *journal) Stats() JournalStats {
	if j == nil {
		return JournalStats{}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Queued = j.mailed + j.held
	s.Failing, s.Broken, s.Lost = j.failing != nil, j.broken != nil, j.lost
	return s
}

func (j *journal) enqueue(e journalEntry) {
	if j == nil {
		return
	}
	j.mu.Lock()
	if j.fenced != nil {
		// The session is stopped: the write could only be refused.
		j.mu.Unlock()
		return
	}
	if j.closed {
		j.lost++
		j.lastErr = errors.New("written after the session was closed")
		j.mu.Unlock()
		j.log.Error().Msg("journal: a write arrived after the session was closed; it is lost")
		return
	}
	j.sendLocked(&e)
	j.mu.Unlock()
}

// sendLocked mails an entry to the actor; mu is held.
func (j *journal) sendLocked(e *journalEntry) {
	j.mailed++
	j.root.Send(j.pid, e)
}

// pass answers barriers whose preceding writes are all done with.
func (j *journal) pass(barriers ...chan<- error) {
	if len(barriers) == 0 {
		return
	}
	j.mu.Lock()
	err := j.passedLocked()
	j.mu.Unlock()
	for _, b := range barriers {
		b <- err
	}
}

// passedLocked is the answer of a barrier whose preceding writes are all
// done with: nil when they were committed, ErrNotSaved when a write was
// given up since the last barrier passed (it belonged to this turn, or to
// work that ran beside it).
func (j *journal) passedLocked() error {
	if j.lost == j.lostSeen {
		return nil
	}
	n := j.lost - j.lostSeen
	j.lostSeen = j.lost
	return fmt.Errorf("%w: %d writes were given up: %v", ErrNotSaved, n, j.lastErr)
}

// journalActor is the journal's writer. Its mailbox is the queue of
// writes; it takes what arrived into a batch, has a goroutine write it,
// and learns the outcome as a journalWritten, so that a barrier, a fence
// or a close is handled while a slow commit runs. One batch is written at
// a time, in order.
type journalActor struct {
	j *journal
	// queue holds the entries received and not yet in a batch; inFlight
	// is the size of the batch being written.
	queue    []journalEntry
	inFlight int
	writing  bool
	// flushing: a journalFlush is on its way.
	flushing bool
	// retrying: a backoff timer runs; retryGen numbers them.
	retrying bool
	retryGen int
	backoff  time.Duration
	// closing: close was asked and every write sent before it received;
	// fenced: likewise for the fence.
	closing, fenced bool
}

// Receive handles the journal's messages.
func (a *journalActor) Receive(c actor.Context) {
	j := a.j
	switch msg := c.Message().(type) {
	case *journalEntry:
		a.take(c, *msg)
	case *journalFlush:
		a.flushing = false
		a.start(c)
	case *journalWritten:
		a.written(c, msg)
	case *journalRetry:
		if msg.gen == a.retryGen && a.retrying {
			a.retrying = false
			a.start(c)
		}
	case *journalClose:
		a.closing = true
		if a.retrying {
			// Closed mid-wait: the session waits for close, so try
			// again soon, as long as patience lasts.
			a.retryIn(c, j.pol().first)
		}
	case *journalFenced:
		a.fenced = true
		a.dropAll()
	case *actor.Stopped:
		close(j.stopped)
		return
	case *actor.Started, *actor.Stopping, *actor.Restarting:
		return
	default:
		j.log.Warn().Str("type", fmt.Sprintf("%T", msg)).Msg("journal: unknown message")
		return
	}
	if (a.closing || a.fenced) && !a.writing && len(a.queue) == 0 {
		c.Stop(c.Self())
	}
}

// pol is the retry policy, read under mu: a test sets it after the
// journal started.
func (j *journal) pol() journalPolicy {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.policy
}

// take queues a received entry and has a batch start once the entries
// received before it are in.
func (a *journalActor) take(c actor.Context, e journalEntry) {
	j := a.j
	j.mu.Lock()
	j.mailed--
	var answer error
	switch {
	case j.fenced != nil:
		answer = j.fenced
	case e.barrier != nil && j.broken != nil:
		answer = j.broken
	case e.barrier != nil && !a.writing && !a.retrying && len(a.queue) == 0:
		// What was queued before it is all done with.
		answer = j.passedLocked()
		j.mu.Unlock()
		e.barrier <- answer
		return
	default:
		a.queue = append(a.queue, e)
		j.held++
	}
	j.mu.Unlock()
	if answer != nil {
		// Dropped: a write could only be refused; a barrier is told why.
		if e.barrier != nil {
			e.barrier <- answer
		}
		return
	}
	a.flush(c)
}

// flush has the next batch start after what the mailbox holds now, so
// that one commit takes all of it.
func (a *journalActor) flush(c actor.Context) {
	if a.flushing || a.writing || a.retrying || len(a.queue) == 0 {
		return
	}
	a.flushing = true
	c.Send(c.Self(), &journalFlush{})
}

// start writes the queue, off the mailbox.
func (a *journalActor) start(c actor.Context) {
	if a.writing || a.retrying || a.fenced || len(a.queue) == 0 || a.j.fencedErr() != nil {
		// Fenced, and the fence's marker not yet here: what is
		// queued waits to be dropped with what is still mailed.
		return
	}
	batch := a.queue
	a.queue = nil
	a.writing, a.inFlight = true, len(batch)
	j, self, root := a.j, c.Self(), c.ActorSystem().Root
	go func() {
		start := time.Now()
		pending, err := j.writeAll(batch)
		root.Send(self, &journalWritten{pending: pending, err: err, took: time.Since(start)})
	}()
}

// written takes a batch's outcome: the next batch, a retry after backoff,
// or the end (fenced; broken while closing).
func (a *journalActor) written(c actor.Context, msg *journalWritten) {
	j := a.j
	a.writing = false
	done := a.inFlight - len(msg.pending)
	a.inFlight = 0
	a.queue = append(msg.pending, a.queue...)
	j.mu.Lock()
	j.held -= done
	j.mu.Unlock()
	switch {
	case errors.Is(msg.err, store.ErrFenced) || a.fenced:
		// Fenced by this batch (the fence's marker follows), or
		// meanwhile from outside: what is left is dropped.
		j.fence(msg.err)
		if a.fenced {
			a.dropAll()
		}
	case msg.err == nil:
		j.succeeded(msg.took)
		a.backoff = 0
		a.flush(c)
	default:
		broken := j.failed(msg.err, a.takeBarriers)
		if broken && a.closing {
			// Closing, and the failure has outlasted its patience:
			// what is left is lost, and close says so.
			rest := a.queue
			a.queue = nil
			j.mu.Lock()
			j.held -= len(rest)
			j.mu.Unlock()
			j.giveUp(rest, msg.err)
			return
		}
		p := j.pol()
		a.backoff = min(max(2*a.backoff, p.first), p.most)
		wait := a.backoff
		if a.closing {
			wait = p.first
		}
		a.retryIn(c, wait)
	}
}

// retryIn starts the backoff timer (anew when one runs).
func (a *journalActor) retryIn(c actor.Context, wait time.Duration) {
	a.retrying = true
	a.retryGen++
	gen, self, root := a.retryGen, c.Self(), c.ActorSystem().Root
	time.AfterFunc(wait, func() { root.Send(self, &journalRetry{gen: gen}) })
}

// takeBarriers removes the barriers from the queue and returns them.
func (a *journalActor) takeBarriers() []chan<- error {
	var out []chan<- error
	kept := a.queue[:0]
	for _, e := range a.queue {
		if e.barrier != nil {
			out = append(out, e.barrier)
			continue
		}
		kept = append(kept, e)
	}
	for i := len(kept); i < len(a.queue); i++ {
		a.queue[i] = journalEntry{}
	}
	a.queue = kept
	a.j.mu.Lock()
	a.j.held -= len(out)
	a.j.mu.Unlock()
	return out
}

// dropAll ends a fenced journal's queue: writes are dropped unwritten
// (none of it could be stored) and barriers are answered with the
// TakenOverError. A batch being written still answers its own barriers.
func (a *journalActor) dropAll() {
	j := a.j
	j.mu.Lock()
	answer, dropped := j.fenced, len(a.queue)
	j.held -= dropped
	j.mu.Unlock()
	for _, e := range a.queue {
		if e.barrier != nil {
			e.barrier <- answer
		}
	}
	a.queue = nil
	if dropped > 0 {
		j.log.Error().Int("dropped", dropped).Msg("journal: writes dropped: the session's claim was superseded")
	}
}

// succeeded ends a failure episode, if one was running: the journal is
// healthy again and says so, truthfully (writes given up are not "saved
// again").
func (j *journal) succeeded(took time.Duration) {
	j.mu.Lock()
	recovered := j.failing != nil
	j.failing, j.broken = nil, nil
	j.stats.Commits++
	j.stats.LastCommit = took
	lost, lastErr := j.lost, j.lastErr
	j.mu.Unlock()
	if !recovered {
		return
	}
	if lost > 0 {
		j.log.Warn().Int("lost", lost).Err(lastErr).Msg("journal: writes succeed again, but some were given up")
		return
	}
	j.log.Info().Msg("journal: writes succeed again; every write queued so far is stored")
	if j.report != nil {
		j.report(nil)
	}
}

// failed keeps a failure episode's books: the first failure is reported;
// a failure that outlasts the policy's patience breaks the journal, which
// answers every waiting barrier (taken by barriers) with ErrNotSaved. It
// reports whether the journal is broken.
func (j *journal) failed(err error, barriers func() []chan<- error) bool {
	now := time.Now()
	p := j.pol()
	j.mu.Lock()
	j.stats.Retries++
	first := j.failing == nil
	if first {
		j.since = now
	}
	j.failing = err
	justBroken := j.broken == nil && now.Sub(j.since) >= p.patience(err)
	if justBroken {
		j.broken = fmt.Errorf("%w: %v", ErrNotSaved, err)
	}
	broken := j.broken
	n := j.held + j.mailed
	j.mu.Unlock()
	var waiting []chan<- error
	if justBroken {
		waiting = barriers()
	}
	switch {
	case first:
		j.log.Error().Err(err).Int("pending", n).Msg("journal: write failed; kept and retried")
		if j.report != nil {
			j.report(err)
		}
	case justBroken:
		j.log.Error().Err(err).Int("pending", n).Dur("failing_for", now.Sub(j.since)).
			Msg("journal: writes keep failing; turns are told their history is not saved, and writes are still retried")
	}
	for _, b := range waiting {
		b <- broken
	}
	return broken != nil
}

// fence stops the journal for good after a write met a later claim
// (store.ErrFenced): everything queued is dropped (none of it could be
// stored), barriers are answered with the TakenOverError, onFenced is
// told, and the actor stops once the batch it is writing, if any, is
// done with.
//
// Another write of the session (the input ledger's) may meet the later
// claim first and call it from its own goroutine: onFenced is told once,
// whoever comes first.
func (j *journal) fence(err error) {
	if j == nil || err == nil {
		return
	}
	to := takenOver(err)
	j.mu.Lock()
	first := j.fenced == nil
	if first {
		j.fenced = fmt.Errorf("%w: %w", ErrNotSaved, to)
		// Sent under mu: every entry mailed before the fence is ahead
		// of it.
		j.root.Send(j.pid, &journalFenced{})
	}
	j.mu.Unlock()
	if !first {
		return
	}
	j.log.Error().Err(err).Msg("journal: the session's claim was superseded; nothing more is written")
	if j.onFenced != nil {
		j.onFenced(to)
	}
}

// fencedErr is the journal's error once the session was taken over
// (ErrNotSaved and a TakenOverError), nil before.
func (j *journal) fencedErr() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fenced
}

// batcher is a store that can run several writes in one transaction: a
// fan-out of specialists queues dozens of writes at once.
type batcher = store.Batcher

// writeAll writes entries in order: runs of writes in one transaction when
// the store can batch (each write in its own savepoint), reading entries
// alone; a barrier is answered once what precedes it is committed. A write
// the store rejects as such is given up; at the first that failed for a
// reason that may clear (or a batch whose commit failed), it returns what
// is left to retry, in order: the failed writes and those after them.
func (j *journal) writeAll(entries []journalEntry) ([]journalEntry, error) {
	b, canBatch := j.st.(batcher)
	for i := 0; i < len(entries); {
		n := 1
		if canBatch && !entries[i].reading {
			for i+n < len(entries) && !entries[i+n].reading {
				n++
			}
		}
		var pending []journalEntry
		var err error
		switch e := entries[i]; {
		case n == 1 && e.barrier != nil:
			j.pass(e.barrier)
		case n == 1:
			if err = j.write(e.fn); errors.Is(err, store.ErrFenced) {
				pending = entries[i : i+1]
			} else if err != nil && !retryableWrite(err) {
				j.giveUp(entries[i:i+1], err)
				err = nil
			} else if err != nil {
				pending = entries[i : i+1]
			}
		default:
			pending, err = j.writeBatch(b, entries[i:i+n])
		}
		if err != nil {
			return append(append([]journalEntry(nil), pending...), entries[i+n:]...), err
		}
		i += n
	}
	return nil, nil
}

// writeBatch writes entries in one transaction; see writeAll.
func (j *journal) writeBatch(b batcher, entries []journalEntry) ([]journalEntry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), j.policy.attempt)
	defer cancel()
	var done, pending []journalEntry
	var rejected []journalEntry
	var rejectErr []error
	var failure error
	err := b.Batch(ctx, func(ctx context.Context) error {
		done, pending, rejected, rejectErr, failure = done[:0], nil, rejected[:0], rejectErr[:0], nil
		for k, e := range entries {
			if e.barrier != nil {
				done = append(done, e)
				continue
			}
			// Each entry is all or nothing (a savepoint), so a retry
			// never repeats half of one.
			err := b.Batch(ctx, func(ctx context.Context) error { return e.fn(ctx, j.st) })
			switch {
			case err == nil:
				done = append(done, e)
			case errors.Is(err, store.ErrFenced):
				// Nothing of the batch may land: it goes back whole.
				return err
			case !retryableWrite(err):
				rejected, rejectErr = append(rejected, e), append(rejectErr, err)
			default:
				pending, failure = entries[k:], err
				return nil // commit what went before
			}
		}
		return nil
	})
	if err != nil {
		// Nothing of the attempt is stored (the transaction did not
		// begin or did not commit): all of it is tried again, the
		// rejected writes too, which will be rejected again then.
		return entries, err
	}
	for k, e := range rejected {
		j.giveUp([]journalEntry{e}, rejectErr[k])
	}
	var barriers []chan<- error
	for _, e := range done {
		if e.barrier != nil {
			barriers = append(barriers, e.barrier)
		}
	}
	j.pass(barriers...)
	return pending, failure
}

// write runs one queued write with a deadline.
func (j *journal) write(fn func(context.Context, store.Store) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), j.policy.attempt)
	defer cancel()
	return fn(ctx, j.st)
}

// giveUp counts the writes among entries as lost to err and answers the
// barriers among them with ErrNotSaved.
func (j *journal) giveUp(entries []journalEntry, err error) {
	n := 0
	var barriers []chan<- error
	for _, e := range entries {
		if e.barrier != nil {
			barriers = append(barriers, e.barrier)
		} else {
			n++
		}
	}
	lostErr := fmt.Errorf("%w: %v", ErrNotSaved, err)
	if n > 0 {
		j.log.Error().Err(err).Int("writes", n).Msg("journal: writes lost")
		j.mu.Lock()
		j.lost += n
		j.lastErr = err
		j.mu.Unlock()
		if j.report != nil {
			j.report(lostErr)
		}
	}
	for _, b := range barriers {
		b <- lostErr
	}
}

// retryableWrite tells failures of the disk or the database file (which
// may clear) from writes the store rejects as such (which never will).
func retryableWrite(err error) bool {
	return !errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrExists)
}

// close writes what is queued, retrying a failing write as long as the
// policy's patience allows, and waits for the actor to stop. It returns
// an ErrNotSaved error when writes were lost.
func (j *journal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	if !j.closed {
		j.closed = true
		if j.fenced == nil {
			// Sent under mu: every entry mailed before close is ahead
			// of it. A fenced journal stops on its own.
			j.root.Send(j.pid, &journalClose{})
		}
	}
	j.mu.Unlock()
	<-j.stopped
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fenced != nil {
		return j.fenced
	}
	if j.lost > 0 {
		return fmt.Errorf("%w: %d writes lost: %v", ErrNotSaved, j.lost, j.lastErr)
	}
	return nil
}

// appendMessage stores one conversation entry of a session.
func (j *journal) appendMessage(sessionID string, m llm.Message, model string, finish llm.FinishReason, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.AppendMessage(ctx, ToStoreMessage(sessionID, m, model, finish, at))
		return err
	})
}

// appendInput stores the user message of input inputID (store.Inputs), so
// that a restart can tell the input's turn had started.
func (j *journal) appendInput(sessionID, inputID string, m llm.Message, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		sm := ToStoreMessage(sessionID, m, "", "", at)
		sm.InputID = inputID
		_, err := st.AppendMessage(ctx, sm)
		return err
	})
}

// inputDone marks an input's turn over; idempotent, and nothing for a store
// without an input ledger.
func (j *journal) inputDone(sessionID, inputID string) {
	j.do(func(ctx context.Context, st store.Store) error {
		if ix, ok := st.(store.Inputs); ok {
			return ix.MarkInputDone(ctx, sessionID, inputID)
		}
		return nil
	})
}

// appendResult stores a tool result with its error and cancelled flags.
func (j *journal) appendResult(sessionID string, r toolResult, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.AppendMessage(ctx, store.Message{SessionID: sessionID, Role: llm.RoleTool, CreatedAt: at,
			Parts: append([]store.Part{store.ToolResultPart{ToolCallID: r.msg.ToolCallID, Name: r.msg.Name, Content: r.msg.Content,
				IsError: r.isError, Cancelled: r.cancelled}}, imageParts(r.msg.Images)...)})
		return err
	})
}

// createChild records a specialist's transcript as a child session: s
// names its parent (ParentID) and what runs in it.
func (j *journal) createChild(s store.Session) {
	j.do(func(ctx context.Context, st store.Store) error {
		_, err := st.CreateSession(ctx, s)
		return err
	})
}

func (j *journal) setTitle(sessionID, title string) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.UpdateSession(ctx, sessionID, store.SessionUpdate{Title: &title})
	})
}

// setModel records the session's main model (a /model or
// session/set_model choice), for a resume to start in it. The channel
// receives the write's own outcome once everything queued before it is
// done with: nil when it is committed, its error when it was given up.
// Unlike a barrier, it leaves the report of other writes given up to the
// turn's barrier. It receives nothing when the journal stops first
// (fenced or closed: see stopped); a nil journal answers nil at once.
func (j *journal) setModel(sessionID, model string) <-chan error {
	out := make(chan error, 1)
	if j == nil {
		out <- nil
		return out
	}
	// The last attempt's error: a batch that did not commit writes its
	// entries again, so only the attempt before the reading entry counts.
	var mu sync.Mutex
	last := errors.New("not written")
	j.do(func(ctx context.Context, st store.Store) error {
		err := st.UpdateSession(ctx, sessionID, store.SessionUpdate{Model: &model})
		mu.Lock()
		last = err
		mu.Unlock()
		return err
	})
	var once sync.Once
	j.afterWrites(func(context.Context, store.Store) error {
		once.Do(func() {
			mu.Lock()
			out <- last
			mu.Unlock()
		})
		return nil
	})
	return out
}

func (j *journal) todos(sessionID string, todos []messages.Todo) {
	j.do(func(ctx context.Context, st store.Store) error {
		list := make([]store.Todo, len(todos))
		for i, t := range todos {
			list[i] = store.Todo{ID: t.ID, Content: t.Content, Status: t.Status}
		}
		return st.SetTodos(ctx, sessionID, list)
	})
}

// toolResult is a tool message with the flags the store keeps.
type toolResult struct {
	msg       llm.Message
	isError   bool
	cancelled bool
}

func (j *journal) usage(sessionID, agent, model string, u messages.Usage, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.AddUsage(ctx, store.UsageRecord{SessionID: sessionID, Agent: agent, Model: model,
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens,
			ReasoningTokens: u.ReasoningTokens, Cost: u.Cost, At: at, Parts: storeParts(u.Parts)})
	})
}

// storeParts is a usage's token ledger in the store's form.
func storeParts(ps messages.Ledger) []store.UsagePart {
	if ps == (messages.Ledger{}) {
		return nil
	}
	out := make([]store.UsagePart, len(ps))
	for i, p := range ps {
		out[i] = store.UsagePart{Part: p.Part, Tokens: p.Tokens, Cached: p.Cached}
	}
	return out
}

func (j *journal) tool(sessionID, agent string, o callOutcome, files []string, at time.Time) {
	j.do(func(ctx context.Context, st store.Store) error {
		return st.RecordTool(ctx, store.ToolRecord{SessionID: sessionID, CallID: o.call.ID, Name: o.call.Name, Agent: agent,
			Input: o.call.Arguments, Output: o.result.Output, IsError: o.result.IsError, Files: files, Elapsed: o.elapsed, At: at})
	})
}

// ToStoreMessage converts a conversation entry to its stored form.
func ToStoreMessage(sessionID string, m llm.Message, model string, finish llm.FinishReason, at time.Time) store.Message {
	sm := store.Message{SessionID: sessionID, Role: m.Role, Model: model, CreatedAt: at}
	switch m.Role {
	case llm.RoleTool:
		sm.Parts = append(sm.Parts, store.ToolResultPart{ToolCallID: m.ToolCallID, Name: m.Name, Content: m.Content})
		sm.Parts = append(sm.Parts, imageParts(m.Images)...)
	case llm.RoleAssistant:
		if m.Reasoning != "" {
			sm.Parts = append(sm.Parts, store.ReasoningPart{Text: m.Reasoning})
		}
		if m.Content != "" {
			sm.Parts = append(sm.Parts, store.TextPart{Text: m.Content})
		}
		for _, c := range m.ToolCalls {
			sm.Parts = append(sm.Parts, store.ToolCallPart{ID: c.ID, Name: c.Name, Input: c.Arguments, Finished: true, Extra: string(c.Extra)})
		}
		if finish != "" {
			sm.Parts = append(sm.Parts, store.FinishPart{Reason: finish, Time: at})
		}
	default:
		sm.Parts = append(sm.Parts, textParts(m)...)
		sm.Parts = append(sm.Parts, imageParts(m.Images)...)
	}
	return sm
}

// textParts splits a user message's content into what the user typed and
// the context Odin added before and after it, so transcripts can leave
// the latter out while the model keeps getting all of it.
func textParts(m llm.Message) []store.Part {
	i := -1
	if m.Typed != "" && m.Typed != m.Content {
		i = strings.Index(m.Content, m.Typed)
	}
	if i < 0 {
		return []store.Part{store.TextPart{Text: m.Content}}
	}
	var parts []store.Part
	if i > 0 {
		parts = append(parts, store.TextPart{Text: m.Content[:i], Injected: true})
	}
	parts = append(parts, store.TextPart{Text: m.Typed})
	if rest := m.Content[i+len(m.Typed):]; rest != "" {
		parts = append(parts, store.TextPart{Text: rest, Injected: true})
	}
	return parts
}

// imageParts are the stored form of a message's images.
func imageParts(images []llm.Image) []store.Part {
	out := make([]store.Part, len(images))
	for i, im := range images {
		out[i] = store.ImagePartOf(im)
	}
	return out
}

// Finish reasons of a reply cut short: by Cancel (seed 002's "Canceled"),
// or by a failed model call.
const (
	finishCancelled llm.FinishReason = "cancelled"
	finishError     llm.FinishReason = "error"
)

// Throttle of streamingReply: the stored reply is rewritten at most this
// often, or when this much new text arrived, whichever comes first.
const (
	streamFlushEvery = 250 * time.Millisecond
	streamFlushBytes = 2048
	streamFlushCall  = streamFlushBytes / 16
)

// streamingReply persists an assistant reply while it streams: the first
// delta appends the message to the store and later ones update it
// (store.UpdateMessage), throttled, so a crash or kill -9 mid-reply keeps
// the text received so far. Deltas arrive in the model call's goroutine
// and the end (finish or cancel) in the actor, so its methods lock; the
// writes themselves run in the journal's order, one at a time (in the
// goroutine writing the journal's batch — each batch starts once the last
// one's outcome is back at the journal actor — or in the one writing a
// store.Grouped group, which hands the outcome back over a channel),
// which is the only place id is touched.
type streamingReply struct {
	j       *journal
	session string
	model   string
	at      time.Time

	mu        sync.Mutex
	text      strings.Builder
	reasoning strings.Builder
	calls     []llm.ToolCall // announced calls; arguments may be incomplete
	lastFlush time.Time
	unflushed int
	written   bool // a write was enqueued
	done      bool

	id string // the stored message, once appended (journal writes only)
}

func (j *journal) startReply(sessionID, model string, at time.Time) *streamingReply {
	return &streamingReply{j: j, session: sessionID, model: model, at: at}
}

// event records a streamed delta and writes the reply when the throttle
// allows.
func (r *streamingReply) event(ev llm.Event) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	switch ev.Kind {
	case llm.EventText:
		r.text.WriteString(ev.Text)
		r.unflushed += len(ev.Text)
	case llm.EventReasoning:
		r.reasoning.WriteString(ev.Text)
		r.unflushed += len(ev.Text)
	case llm.EventRetry:
		// The call starts over: what the failed attempt sent is not
		// part of the reply; the next write replaces it.
		r.text.Reset()
		r.reasoning.Reset()
		r.calls = nil
		return
	case llm.EventToolCall:
		if ev.ToolCall != nil {
			r.calls = append(r.calls, llm.ToolCall{ID: ev.ToolCall.ID, Name: ev.ToolCall.Name})
			// A call counts as streamFlushCall bytes: a write for each of
			// them would store the growing list again per call, quadratic
			// in a fan-out's 256 delegations.
			r.unflushed += streamFlushCall
		}
	default:
		return
	}
	now := time.Now()
	if !r.written || now.Sub(r.lastFlush) >= streamFlushEvery || r.unflushed >= streamFlushBytes {
		r.flushLocked(r.partialLocked(), "", now)
	}
}

// partialLocked is the reply received so far. Calls whose arguments had
// not finished streaming are stored with {} (valid JSON) and unfinished.
func (r *streamingReply) partialLocked() store.Message {
	m := store.Message{SessionID: r.session, Role: llm.RoleAssistant, Model: r.model, CreatedAt: r.at}
	if s := r.reasoning.String(); s != "" {
		m.Parts = append(m.Parts, store.ReasoningPart{Text: s})
	}
	if s := r.text.String(); s != "" {
		m.Parts = append(m.Parts, store.TextPart{Text: s})
	}
	for _, c := range r.calls {
		m.Parts = append(m.Parts, store.ToolCallPart{ID: c.ID, Name: c.Name, Input: "{}"})
	}
	return m
}

// flushLocked enqueues a write of m: an append the first time, an update
// of the same message afterwards. finish, when set, is appended as the
// reply's FinishPart.
func (r *streamingReply) flushLocked(m store.Message, finish llm.FinishReason, now time.Time) {
	r.flushInputLocked(m, finish, now, "")
}

// flushInputLocked is flushLocked; with inputID set, m is the input's final
// reply and the input is marked done in the same transaction
// (store.Inputs.FinishInput), so a crash cannot keep one without the other.
func (r *streamingReply) flushInputLocked(m store.Message, finish llm.FinishReason, now time.Time, inputID string) {
	if finish != "" {
		m.Parts = append(m.Parts, store.FinishPart{Reason: finish, Time: now})
	}
	r.written, r.lastFlush, r.unflushed = true, now, 0
	r.j.do(func(ctx context.Context, st store.Store) error {
		if ix, ok := st.(store.Inputs); ok && inputID != "" {
			m.ID = r.id
			stored, err := ix.FinishInput(ctx, inputID, m)
			if err != nil {
				return err
			}
			r.id = stored.ID
			return nil
		}
		if r.id != "" {
			m.ID = r.id
			err := st.UpdateMessage(ctx, m)
			if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			// The append was in a batch whose commit failed: append
			// again, with the same ID.
		}
		stored, err := st.AppendMessage(ctx, m)
		if err != nil {
			return err
		}
		r.id = stored.ID
		return nil
	})
}

// finish stores the complete reply in place of the partial one. With
// inputID set it is that input's final reply, stored with its done mark.
func (r *streamingReply) finish(m llm.Message, finish llm.FinishReason, at time.Time, inputID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	sm := ToStoreMessage(r.session, m, r.model, "", r.at)
	r.flushInputLocked(sm, finish, at, inputID)
}

// cut ends a reply cut short (finishCancelled or finishError): what
// streamed is stored with that finish, and every call it announced gets a
// cancelled result (seed 002), so the stored history stays valid. It
// returns the partial reply and the results for the live history; ok is
// false when nothing had streamed (no message is stored then) or the reply
// already ended.
func (r *streamingReply) cut(why llm.FinishReason, at time.Time) (reply llm.Message, results []toolResult, ok bool) {
	if r == nil {
		return llm.Message{}, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return llm.Message{}, nil, false
	}
	r.done = true
	if r.text.Len() == 0 && r.reasoning.Len() == 0 && len(r.calls) == 0 {
		return llm.Message{}, nil, false
	}
	r.flushLocked(r.partialLocked(), why, at)
	reply = llm.Message{Role: llm.RoleAssistant, Content: r.text.String(), Reasoning: r.reasoning.String()}
	for _, c := range r.calls {
		call := llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: "{}"}
		reply.ToolCalls = append(reply.ToolCalls, call)
		results = append(results, cancelledMessage(call))
	}
	return reply, results, true
}
