package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

// Session is a running Odin session as the server drives it.
type Session interface {
	ID() string
	Submit(body string, mode messages.Mode) messages.UserMessage
	Cancel(reason string)
	Bus() *events.Bus
	Answer(id string, d policy.Decision) error
	Pending() []messages.ApprovalRequested
	Queue(ctx context.Context) (*messages.QueueState, error)
	Remove(ctx context.Context, id string) (*messages.QueueState, error)
	// Close cancels the running turn, persists the session and stops it.
	Close(ctx context.Context) error
}

// Elicitor is a Session whose MCP servers' requests for input
// (messages.ElicitationRequested) are answered through the API.
// AnswerElicitation's error wraps ErrInvalidAnswer when accepted content
// does not fit the form (the request stays pending); any other error
// means the request is not pending.
type Elicitor interface {
	AnswerElicitation(id, action string, content map[string]any) error
	PendingElicitations() []messages.ElicitationRequested
}

// ErrInvalidAnswer marks an answer to an elicitation that does not fit
// its form (answered 400).
var ErrInvalidAnswer = errors.New("serve: the answer does not fit the form")

// Accepter is a Session that keeps an input ledger: Accept queues an input
// under the caller's key, or, for a key accepted before, queues nothing
// and returns the first input with its state and dup set.
type Accepter interface {
	Accept(ctx context.Context, key, body string, mode messages.Mode) (in messages.UserMessage, state string, dup bool, err error)
}

// Resumer is a Session that found turns a crash interrupted when it was
// opened: Resume runs them (once) and says how many.
type Resumer interface {
	Resume() int
}

// PendingLister is an Opener that can list the stored sessions holding
// inputs accepted and not done, which the server resumes when it starts.
type PendingLister interface {
	PendingSessions(ctx context.Context) ([]string, error)
}

// Opener starts and restores sessions.
type Opener interface {
	// New starts a new session for the project directory.
	New(ctx context.Context, project string) (Session, error)
	// Load restores a stored session of the project.
	Load(ctx context.Context, id, project string) (Session, error)
	// Stored returns the project of a session in the store, for a session
	// this server did not start (one from before a restart, or from the
	// CLI); an error wrapping ErrNotFound when there is no such top-level
	// session.
	Stored(ctx context.Context, id string) (project string, err error)
	// Export writes a stored session of the project as JSONL or Markdown.
	Export(ctx context.Context, id, project, format string, w io.Writer) error
	// Undo restores the files of the project's newest change set and says
	// what it restored.
	Undo(ctx context.Context, project string) (string, error)
}

// ErrNotFound is returned for a session the server does not know.
var ErrNotFound = errors.New("serve: no such session")

// ErrTakenOver is returned for an input to a session another process took
// over (messages.SessionFenced): this server stopped it and will not
// restore it, which would take it back, until it is deleted here.
var ErrTakenOver = errors.New("serve: session taken over by another process")

// entry is one session known to the server, running or passivated.
type entry struct {
	id      string
	project string
	hub     *hub

	// mu guards the session's lifecycle; the event pump never takes it,
	// since Close waits for the pump to drain the session's last events.
	mu       sync.Mutex
	sess     Session // nil while passivated
	stopPump context.CancelFunc
	pumpDone chan struct{}

	lastActive atomic.Int64 // unix nanoseconds
	// inFlight counts inputs submitted and not yet finished; a session
	// with work or pending approvals is never passivated.
	inFlight atomic.Int64
	// takenOver is the reason of the session's SessionFenced event, once
	// another process took it over.
	takenOver atomic.Pointer[string]
}

// Info describes a session for the API.
type Info struct {
	ID         string    `json:"id"`
	Project    string    `json:"project"`
	Active     bool      `json:"active"`
	InFlight   int64     `json:"in_flight"`
	LastActive time.Time `json:"last_active"`
	LastEvent  uint64    `json:"last_event_id"`
	// TakenOver says why, once another process took the session over.
	TakenOver string `json:"taken_over,omitempty"`
}

// manager owns the server's sessions.
type manager struct {
	open    Opener
	idle    time.Duration
	bufSize int
	log     *slog.Logger
	now     func() time.Time

	mu       sync.Mutex
	sessions map[string]*entry
	closing  bool
	// rejoining is open while the opener reconnects (see Reconnect):
	// sessions are neither created nor restored until it closes.
	rejoining chan struct{}

	// finished counts turns by status; passivated counts passivations.
	finished   statusCounts
	passivated atomic.Int64
	// freedAt is the count of finished turns and passivations at the
	// last return of memory to the OS (see reclaim).
	freedAt int64
}

// statusCounts counts finished turns by status.
type statusCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *statusCounts) add(status string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[status]++
	c.mu.Unlock()
}

// snapshot returns the counts and their total.
func (c *statusCounts) snapshot() (map[string]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.n))
	var total int64
	for k, v := range c.n {
		out[k] = v
		total += v
	}
	return out, total
}

func (m *manager) create(ctx context.Context, project string) (*entry, error) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, errShuttingDown
	}
	if err := m.waitRejoin(ctx); err != nil {
		return nil, err
	}
	s, err := m.open.New(ctx, project)
	if err != nil {
		return nil, err
	}
	e := &entry{id: s.ID(), project: project, hub: newHub(m.bufSize)}
	e.lastActive.Store(m.now().UnixNano())
	e.activate(s, &m.finished)
	m.mu.Lock()
	m.sessions[e.id] = e
	m.mu.Unlock()
	return e, nil
}

var errShuttingDown = errors.New("serve: the server is shutting down")

func (m *manager) get(id string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e, nil
}

// adopt registers a stored session this server does not know yet as
// passivated: its next message restores it from the store like any
// passivated session. allowed vets its project (the configured roots). A
// concurrent adopt of the same ID gets the same entry.
func (m *manager) adopt(ctx context.Context, id string, allowed func(string) (string, error)) (*entry, error) {
	if e, err := m.get(id); err == nil {
		return e, nil
	}
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, errShuttingDown
	}
	if m.open == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	project, err := m.open.Stored(ctx, id)
	if err != nil {
		return nil, err
	}
	dir, err := allowed(project)
	if err != nil {
		// Not ours to serve: the same answer as for no session at all, so
		// the API does not tell which IDs exist outside the roots.
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	e := &entry{id: id, project: dir, hub: newHub(m.bufSize)}
	e.lastActive.Store(m.now().UnixNano())
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.sessions[id]; ok {
		return old, nil
	}
	m.sessions[id] = e
	return e, nil
}

func (m *manager) list() []Info {
	m.mu.Lock()
	all := make([]*entry, 0, len(m.sessions))
	for _, e := range m.sessions {
		all = append(all, e)
	}
	m.mu.Unlock()
	out := make([]Info, 0, len(all))
	for _, e := range all {
		out = append(out, e.info())
	}
	return out
}

func (e *entry) info() Info {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := Info{ID: e.id, Project: e.project, Active: e.sess != nil, InFlight: e.inFlight.Load(),
		LastActive: time.Unix(0, e.lastActive.Load()), LastEvent: e.hub.last()}
	if r := e.takenOver.Load(); r != nil {
		info.TakenOver = *r
	}
	return info
}

// activate attaches a running session and starts copying its events to the
// hub. The subscription is lossless, so no SSE client misses an event the
// hub still holds. Called with e.mu held or before e is shared.
func (e *entry) activate(s Session, finished *statusCounts) {
	ctx, stop := context.WithCancel(context.Background())
	evs := s.Bus().Subscribe(ctx, 256, true)
	done := make(chan struct{})
	e.sess, e.stopPump, e.pumpDone = s, stop, done
	go func() {
		defer close(done)
		for env := range evs {
			if tf, ok := env.Event.(messages.TurnFinished); ok {
				finished.add(string(tf.Result.Status))
			}
			if f, ok := env.Event.(messages.SessionFenced); ok {
				reason := f.Reason
				e.takenOver.Store(&reason)
			}
			switch env.Event.(type) {
			case messages.TurnFinished, messages.InputRemoved:
				if e.inFlight.Add(-1) < 0 {
					e.inFlight.Store(0)
				}
				e.lastActive.Store(time.Now().UnixNano())
			}
			e.hub.add(e.project, env)
		}
	}()
}

// running returns the session, restoring it from the store if it was
// passivated. Callers hold e.mu.
func (m *manager) running(ctx context.Context, e *entry) (Session, error) {
	if e.sess != nil {
		return e.sess, nil
	}
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return nil, errShuttingDown
	}
	if err := m.waitRejoin(ctx); err != nil {
		return nil, err
	}
	s, err := m.open.Load(ctx, e.id, e.project)
	if err != nil {
		return nil, fmt.Errorf("restore session %s: %w", e.id, err)
	}
	e.activate(s, &m.finished)
	if r, ok := s.(Resumer); ok {
		// After activate: the resumed turns' events reach the hub.
		e.inFlight.Add(int64(r.Resume()))
	}
	return s, nil
}

// accepted is an input as the API answers it.
type accepted struct {
	messages.UserMessage
	State     string `json:"state,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

func (m *manager) submit(ctx context.Context, e *entry, key, body string, mode messages.Mode) (accepted, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.gone(); err != nil {
		return accepted{}, err
	}
	s, err := m.running(ctx, e)
	if err != nil {
		return accepted{}, err
	}
	e.lastActive.Store(m.now().UnixNano())
	if a, ok := s.(Accepter); ok {
		// Counted before Accept queues it: its turn_finished may come
		// before Accept returns.
		e.inFlight.Add(1)
		in, state, dup, err := a.Accept(ctx, key, body, mode)
		if err != nil || dup {
			e.inFlight.Add(-1)
		}
		if errors.Is(err, store.ErrFenced) {
			// The ledger write was the first to meet the later claim:
			// the session is another process's now, as after its
			// session_fenced event.
			reason := err.Error()
			e.takenOver.CompareAndSwap(nil, &reason)
			return accepted{}, e.gone()
		}
		if err != nil {
			return accepted{}, err
		}
		return accepted{UserMessage: in, State: state, Duplicate: dup}, nil
	}
	e.inFlight.Add(1)
	return accepted{UserMessage: s.Submit(body, mode)}, nil
}

// resumePending opens every stored session holding inputs accepted and
// not done (a previous server died, or stopped, mid-turn), so that their
// turns run again; allowed vets the projects as adopt does. It returns how
// many sessions it opened.
func (m *manager) resumePending(ctx context.Context, allowed func(string) (string, error)) (int, error) {
	pl, ok := m.open.(PendingLister)
	if !ok {
		return 0, nil
	}
	ids, err := pl.PendingSessions(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		e, err := m.adopt(ctx, id, allowed)
		if err != nil {
			m.log.Warn("serve: not resuming the interrupted turns of a session", "session", id, "err", err)
			continue
		}
		e.mu.Lock()
		_, err = m.running(ctx, e)
		e.mu.Unlock()
		if err != nil {
			m.log.Warn("serve: resuming the interrupted turns of a session", "session", id, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// gone is ErrTakenOver, with the reason, once another process took the
// session over; nil before.
func (e *entry) gone() error {
	if r := e.takenOver.Load(); r != nil {
		return fmt.Errorf("%w: %s; DELETE /v1/sessions/%s here, then send the input again to take it back", ErrTakenOver, *r, e.id)
	}
	return nil
}

// withSession runs f on the running session, if it is running: a
// passivated session has no turn, queue or approval to act on.
func (e *entry) withSession(f func(Session) error) error {
	e.mu.Lock()
	s := e.sess
	e.mu.Unlock()
	if s == nil {
		return f(nil)
	}
	return f(s)
}

// passivate closes e's session if it is idle: the store holds its history
// and the next message restores it. It reports whether it did.
func (m *manager) passivate(e *entry, force bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sess == nil {
		return false
	}
	idleFor := m.now().Sub(time.Unix(0, e.lastActive.Load()))
	m.mu.Lock()
	idle := m.idle
	m.mu.Unlock()
	if !force && (e.inFlight.Load() > 0 || len(e.sess.Pending()) > 0 || idleFor < idle) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.sess.Close(ctx); err != nil {
		m.log.Warn("serve: closing session", "session", e.id, "err", err)
	}
	// Close published the cancelled turn's end; the bus delivers a
	// subscriber's queue at its own pace, so let the pump pass it on to
	// the SSE clients before the subscription ends (bounded: a session
	// that never started a turn has nothing in flight).
	for deadline := time.Now().Add(2 * time.Second); e.inFlight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	e.stopPump()
	<-e.pumpDone
	e.sess, e.stopPump, e.pumpDone = nil, nil, nil
	e.inFlight.Store(0)
	if !force {
		e.hub.trim()
	}
	m.passivated.Add(1)
	return true
}

// reclaimAfter is how much work (turns finished plus sessions passivated)
// makes an idle server return its free memory to the OS.
const reclaimAfter = 20

// reclaim returns the heap's free memory to the OS when no turn is in
// flight and enough work was done since it last did: after a burst the
// Go runtime keeps the burst's heap mapped and gives it back only slowly,
// so the server's resident memory stayed at its peak. It costs a full
// collection, which an idle server can spare; it reports whether it ran.
func (m *manager) reclaim() bool {
	m.mu.Lock()
	all := make([]*entry, 0, len(m.sessions))
	for _, e := range m.sessions {
		all = append(all, e)
	}
	m.mu.Unlock()
	for _, e := range all {
		if e.inFlight.Load() > 0 {
			return false
		}
	}
	_, done := m.finished.snapshot()
	work := done + m.passivated.Load()
	m.mu.Lock()
	if work-m.freedAt < reclaimAfter {
		m.mu.Unlock()
		return false
	}
	m.freedAt = work
	m.mu.Unlock()
	debug.FreeOSMemory()
	return true
}

// sweep passivates every idle session.
func (m *manager) sweep() int {
	n := 0
	for _, i := range m.list() {
		e, err := m.get(i.ID)
		if err == nil && m.passivate(e, false) {
			n++
		}
	}
	return n
}

// ErrUnavailable is returned while the server cannot reach its sessions
// for a moment (a cluster front rejoining the cluster): answered 503 with
// Retry-After, and the same request succeeds a moment later.
var ErrUnavailable = errors.New("serve: the sessions are unreachable for a moment (rejoining the cluster)")

// rejoinWait bounds how long a request waits for a reconnect to finish
// before it is answered ErrUnavailable.
const rejoinWait = 10 * time.Second

// waitRejoin waits for a reconnect in progress, if any, to finish.
func (m *manager) waitRejoin(ctx context.Context) error {
	m.mu.Lock()
	gate := m.rejoining
	m.mu.Unlock()
	if gate == nil {
		return nil
	}
	t := time.NewTimer(rejoinWait)
	defer t.Stop()
	select {
	case <-gate:
		return nil
	case <-t.C:
		return ErrUnavailable
	case <-ctx.Done():
		return ErrUnavailable
	}
}

// Reopener is an Opener whose sessions outlive no reconnect: Reopen
// opens session id again after one, from where old (the session before
// the reconnect, closed) left off, so that no event of the gap is lost.
type Reopener interface {
	Reopen(ctx context.Context, old Session, id, project string) (Session, error)
}

// reconnect detaches every running session (their hubs, and so the SSE
// streams, stay), runs rejoin while no session is created or restored,
// then opens again the sessions that were running, through Reopen when
// the opener has it. A session that cannot be reopened stays passivated:
// its next request restores it (or answers the error).
func (m *manager) reconnect(rejoin func() error) error {
	gate := make(chan struct{})
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return errShuttingDown
	}
	if m.rejoining != nil {
		m.mu.Unlock()
		return errors.New("serve: a reconnect is already in progress")
	}
	m.rejoining = gate
	all := make([]*entry, 0, len(m.sessions))
	for _, e := range m.sessions {
		all = append(all, e)
	}
	m.mu.Unlock()
	type detached struct {
		e   *entry
		old Session
	}
	var was []detached
	for _, e := range all {
		e.mu.Lock()
		if e.sess != nil {
			// Close stops only this server's link to the session; its
			// work goes on where it runs (a grain on another member).
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := e.sess.Close(ctx); err != nil {
				m.log.Warn("serve: detaching a session before a reconnect", "session", e.id, "err", err)
			}
			cancel()
			e.stopPump()
			<-e.pumpDone
			was = append(was, detached{e, e.sess})
			e.sess, e.stopPump, e.pumpDone = nil, nil, nil
		}
		e.mu.Unlock()
	}
	err := rejoin()
	m.mu.Lock()
	m.rejoining = nil
	m.mu.Unlock()
	close(gate)
	if err != nil {
		return err
	}
	re, _ := m.open.(Reopener)
	for _, d := range was {
		d.e.mu.Lock()
		if d.e.sess == nil && d.e.takenOver.Load() == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var s Session
			var err error
			if re != nil {
				s, err = re.Reopen(ctx, d.old, d.e.id, d.e.project)
			} else {
				s, err = m.open.Load(ctx, d.e.id, d.e.project)
			}
			cancel()
			if err != nil {
				m.log.Warn("serve: reopening a session after a reconnect", "session", d.e.id, "err", err)
			} else {
				d.e.activate(s, &m.finished)
			}
		}
		d.e.mu.Unlock()
	}
	return nil
}

// shutdown cancels and persists every session, then ends every event
// stream with a final "shutdown" event.
func (m *manager) shutdown() {
	m.mu.Lock()
	m.closing = true
	all := make([]*entry, 0, len(m.sessions))
	for _, e := range m.sessions {
		all = append(all, e)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.passivate(e, true)
			e.hub.close("shutdown", []byte(`{"type":"shutdown","reason":"the server is shutting down; in-flight turns were cancelled and saved, and resume when it starts again"}`))
		}()
	}
	wg.Wait()
}
