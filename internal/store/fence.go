package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrFenced: the write went through a claim that no longer owns its
// session (a later Claim took it), so nothing was written. It is final:
// retrying the write can only fail the same way.
var ErrFenced = errors.New("fenced: the session was claimed by a later writer")

// FencedError is the ErrFenced of one write: which claim wrote and which
// epoch owns the session now (0 when the session no longer exists).
type FencedError struct {
	Session string
	// Epoch is the claim's; Current the session's when the write was
	// refused.
	Epoch, Current int64
}

func (e *FencedError) Error() string {
	if e.Current == 0 {
		return fmt.Sprintf("session %s no longer exists (claim at epoch %d): %v", e.Session, e.Epoch, ErrFenced)
	}
	return fmt.Sprintf("session %s: claim at epoch %d, the session is at epoch %d: %v", e.Session, e.Epoch, e.Current, ErrFenced)
}

// Is makes errors.Is(err, ErrFenced) hold.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// Claimer is a Store that can fence a session's writers (both backends).
type Claimer interface {
	// Claim makes node the session's writer: the session's epoch goes
	// up by one in one transaction, and the returned handle writes with
	// that epoch. Every write through the handle checks, in its own
	// transaction, that the epoch is still the session's, and otherwise
	// fails with ErrFenced having written nothing; so a writer that lost
	// the session to a later Claim (it stalled, its host was partitioned
	// away) cannot change it any more, whatever it believes.
	// ErrNotFound if the session does not exist.
	Claim(ctx context.Context, sessionID, node string) (*Fenced, error)
}

// fenceKey carries a claim in a write's context.
type fenceKey struct{}

type fence struct {
	session string
	epoch   int64
}

// Claim implements Claimer. On SQLite the claims waiting at one moment
// share one write transaction (see claimGroup); on PostgreSQL each is its
// own transaction on a connection of the pool, so one claim waiting for a
// row lock (a stalled owner's write) holds up no other.
func (s *SQLite) Claim(ctx context.Context, sessionID, node string) (*Fenced, error) {
	var c claimCall
	var err error
	if _, inBatch := ctx.Value(batchKey{}).(*wtx); inBatch || s.dialect == dialectPostgres || s.claims == nil {
		err = s.write(ctx, func(tx *wtx) error { return s.claimIn(ctx, tx, sessionID, node, &c) })
	} else {
		c = claimCall{ctx: ctx, session: sessionID, node: node, done: make(chan struct{})}
		err = s.claims.claim(s, &c)
	}
	if err != nil {
		return nil, fmt.Errorf("store: claim: %w", err)
	}
	return &Fenced{Store: s, batch: s.Batch, f: fence{session: sessionID, epoch: c.epoch}, prev: c.prev}, nil
}

// claimIn claims sessionID for node in tx: the epoch goes up by one and
// c gets it with the owner it replaced.
func (s *SQLite) claimIn(ctx context.Context, tx *wtx, sessionID, node string, c *claimCall) error {
	q := `SELECT owner FROM sessions WHERE id = ?`
	if s.dialect == dialectPostgres {
		q += ` FOR NO KEY UPDATE`
	}
	err := tx.QueryRowContext(ctx, q, sessionID).Scan(&c.prev)
	if err == nil {
		err = tx.QueryRowContext(ctx, `UPDATE sessions SET epoch = epoch + 1, owner = ? WHERE id = ? RETURNING epoch`,
			node, sessionID).Scan(&c.epoch)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	return err
}

// claimGroup writes the claims of one SQLite store that wait at the same
// moment in one transaction (group commit). A node activating a hundred
// sessions at once otherwise queued a hundred write transactions on the
// process's one writer connection, each a BEGIN IMMEDIATE, a commit and a
// hand-over of the connection; under load the last activation waited
// seconds for its claim. Grouped, each claim still bumps its session's
// epoch by exactly one and returns it, so fencing is unchanged: a claim
// only ever adds 1 to the epoch in a committed transaction, and every
// write through a claim compares the epoch in its own transaction.
type claimGroup struct {
	mu      sync.Mutex
	waiting []*claimCall
	leading bool // a goroutine is writing a group and will hand on
	groups  int  // transactions written, for tests
}

// claimCall is one Claim waiting for its group, and its outcome.
type claimCall struct {
	ctx           context.Context
	session, node string
	epoch         int64
	prev          string
	err           error
	done          chan struct{}
}

// claimGroupMax bounds the claims of one transaction, so that a heartbeat
// (which goes ahead of queued writes, not of the one running) waits for
// at most one bounded transaction.
const claimGroupMax = 64

// claim queues c and returns once its group is committed or failed.
func (g *claimGroup) claim(s *SQLite, c *claimCall) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	g.waiting = append(g.waiting, c)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if lead {
		g.lead(s)
	}
	<-c.done
	return c.err
}

// lead writes one group, then hands on to a new goroutine when more
// claims arrived meanwhile: the caller who led returns with its own
// claim.
func (g *claimGroup) lead(s *SQLite) {
	g.mu.Lock()
	// Two claims of one session in a group would read the same owner:
	// the second waits for the next group, which sees the first's.
	var calls []*claimCall
	seen := map[string]bool{}
	rest := g.waiting[:0:0]
	for _, c := range g.waiting {
		if len(calls) < claimGroupMax && !seen[c.session] {
			seen[c.session] = true
			calls = append(calls, c)
		} else {
			rest = append(rest, c)
		}
	}
	g.waiting = rest
	g.mu.Unlock()
	g.commit(s, calls)
	g.mu.Lock()
	g.groups++
	more := len(g.waiting) > 0
	g.leading = more
	g.mu.Unlock()
	if more {
		go g.lead(s)
	}
}

// commit claims calls in one transaction. A claim of a session that does
// not exist fails alone (ErrNotFound, nothing of it written); any other
// error fails the group, none of which is then stored. A caller whose
// context ended before the group began is left out with its error.
func (g *claimGroup) commit(s *SQLite, calls []*claimCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	var deadline time.Time
	live := calls[:0:0]
	for _, c := range calls {
		if c.err = c.ctx.Err(); c.err != nil {
			continue
		}
		live = append(live, c)
		d, ok := c.ctx.Deadline()
		if !ok {
			d = time.Now().Add(groupDeadline)
		}
		if d.After(deadline) {
			deadline = d
		}
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	err := s.inTx(ctx, func(tx *wtx) error {
		for _, c := range live {
			c.err = s.claimIn(ctx, tx, c.session, c.node, c)
			if c.err != nil && !errors.Is(c.err, ErrNotFound) {
				return c.err
			}
		}
		return nil
	})
	if err != nil {
		for _, c := range live {
			c.err, c.epoch, c.prev = err, 0, ""
		}
	}
}

// Claim implements Claimer; the handle's batches join the group commits.
func (g *Grouped) Claim(ctx context.Context, sessionID, node string) (*Fenced, error) {
	h, err := g.SQLite.Claim(ctx, sessionID, node)
	if err != nil {
		return nil, err
	}
	h.Store, h.batch = g, g.Batch
	return h, nil
}

// fenced wraps fn with the check of the claim ctx carries, if any: the
// session's epoch is read in fn's transaction (on PostgreSQL with the
// row locked until commit, so a Claim waits for the write to finish and
// a write after the Claim sees the new epoch).
func (s *SQLite) fenced(ctx context.Context, fn func(tx *wtx) error) func(tx *wtx) error {
	f, ok := ctx.Value(fenceKey{}).(fence)
	if !ok {
		return fn
	}
	return func(tx *wtx) error {
		q := `SELECT epoch FROM sessions WHERE id = ?`
		if s.dialect == dialectPostgres {
			q += ` FOR NO KEY UPDATE`
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var epoch int64
		err := tx.QueryRowContext(tx.stepCtx(ctx), q, f.session).Scan(&epoch)
		if errors.Is(err, sql.ErrNoRows) {
			fencedWrites.Inc()
			return &FencedError{Session: f.session, Epoch: f.epoch}
		}
		if err != nil {
			return err
		}
		if epoch != f.epoch {
			fencedWrites.Inc()
			return &FencedError{Session: f.session, Epoch: f.epoch, Current: epoch}
		}
		return fn(tx)
	}
}

// Fenced is a claim on one session: a Store whose every write first
// checks, in the write's transaction, that the claim still owns the
// session (see Claimer). Reads are the store's. Close releases nothing:
// the store stays open for its owner.
type Fenced struct {
	Store
	batch func(ctx context.Context, fn func(ctx context.Context) error) error
	f     fence
	prev  string
}

var _ Store = (*Fenced)(nil)

// Epoch is the claim's epoch.
func (h *Fenced) Epoch() int64 { return h.f.epoch }

// Previous is the node that held the session's claim before this one
// ("" for a session never claimed): a cluster tells a failover from a
// move or a re-activation by it.
func (h *Fenced) Previous() string { return h.prev }

// SessionID is the claimed session's ID.
func (h *Fenced) SessionID() string { return h.f.session }

func (h *Fenced) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, fenceKey{}, h.f)
}

// Batch runs fn as the store's Batch, every write in it fenced.
func (h *Fenced) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	return h.batch(h.ctx(ctx), fn)
}

// Close implements Store; it leaves the store open.
func (h *Fenced) Close() error { return nil }

// The writes, each through the fence.

func (h *Fenced) CreateSession(ctx context.Context, s Session) (Session, error) {
	return h.Store.CreateSession(h.ctx(ctx), s)
}

func (h *Fenced) UpdateSession(ctx context.Context, id string, u SessionUpdate) error {
	return h.Store.UpdateSession(h.ctx(ctx), id, u)
}

func (h *Fenced) DeleteSession(ctx context.Context, id string) error {
	return h.Store.DeleteSession(h.ctx(ctx), id)
}

func (h *Fenced) AppendMessage(ctx context.Context, m Message) (Message, error) {
	return h.Store.AppendMessage(h.ctx(ctx), m)
}

func (h *Fenced) UpdateMessage(ctx context.Context, m Message) error {
	return h.Store.UpdateMessage(h.ctx(ctx), m)
}

func (h *Fenced) AppendSummary(ctx context.Context, m Message) (Message, error) {
	return h.Store.AppendSummary(h.ctx(ctx), m)
}

// Messages is the store's, but its repair of dangling tool calls is a
// write and is fenced: a zombie gets ErrFenced rather than a repair.
func (h *Fenced) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	return h.Store.Messages(h.ctx(ctx), sessionID)
}

func (h *Fenced) RecordTool(ctx context.Context, r ToolRecord) error {
	return h.Store.RecordTool(h.ctx(ctx), r)
}

func (h *Fenced) SetTodos(ctx context.Context, sessionID string, todos []Todo) error {
	return h.Store.SetTodos(h.ctx(ctx), sessionID, todos)
}

func (h *Fenced) AddUsage(ctx context.Context, u UsageRecord) error {
	return h.Store.AddUsage(h.ctx(ctx), u)
}

func (h *Fenced) CreateCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	return h.Store.CreateCheckpoint(h.ctx(ctx), c)
}

func (h *Fenced) AddSnapshot(ctx context.Context, checkpointID string, f FileSnapshot) (bool, error) {
	return h.Store.AddSnapshot(h.ctx(ctx), checkpointID, f)
}

func (h *Fenced) SetAfterHashes(ctx context.Context, checkpointID string, hashes map[string]string) error {
	return h.Store.SetAfterHashes(h.ctx(ctx), checkpointID, hashes)
}

func (h *Fenced) MarkRestored(ctx context.Context, id string, at time.Time) error {
	return h.Store.MarkRestored(h.ctx(ctx), id, at)
}

func (h *Fenced) CachePut(ctx context.Context, key string, value []byte, at time.Time) error {
	return h.Store.CachePut(h.ctx(ctx), key, value, at)
}

func (h *Fenced) CachePrune(ctx context.Context, olderThan time.Time) (int64, error) {
	return h.Store.CachePrune(h.ctx(ctx), olderThan)
}

func (h *Fenced) PutAgentRun(ctx context.Context, r AgentRunRecord) error {
	return h.Store.PutAgentRun(h.ctx(ctx), r)
}

func (h *Fenced) Import(ctx context.Context, archives []SessionArchive) error {
	return h.Store.Import(h.ctx(ctx), archives)
}
