package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/term"
	"github.com/odin-code/odin/messages"
)

// remoteSession is a session hosted by odin serve, driven over its API:
// the term.Session the REPL draws when attached. Every action is a
// request; the events come from the session's SSE stream, re-opened after
// the last event seen when the connection drops. Closing it detaches: the
// session goes on running on the server.
type remoteSession struct {
	c  *attachClient
	id string
	// ctx is the attachment's lifetime: background sends and cancels use
	// it; Close ends it after the sends queued so far went out.
	ctx  context.Context
	stop context.CancelFunc

	// start is where the event stream starts: the server's last event when
	// the session was opened, and the events to show before the stream's
	// (the turn running and the inputs queued at that moment).
	start   uint64
	initial []messages.Event
	// storedTurns is how many turns the stored transcript held when the
	// attachment started: the turns shown before the live ones.
	storedTurns int

	sends   chan remoteSend
	sendsMu sync.Mutex // guards closing sends against Submit
	closed  bool
	sent    chan struct{} // closed when the sender has drained sends
	notes   chan messages.Event

	// retryWait is the first pause before a retry or a reconnect (doubled
	// up to 5 s); tests shorten it.
	retryWait time.Duration
}

// remoteSend is one input waiting to be posted.
type remoteSend struct {
	key  string
	body string
	mode messages.Mode
}

func newRemoteSession(c *attachClient, id string, start uint64, initial []messages.Event) *remoteSession {
	ctx, stop := context.WithCancel(context.Background())
	s := &remoteSession{c: c, id: id, ctx: ctx, stop: stop, start: start, initial: initial,
		sends: make(chan remoteSend, 256), sent: make(chan struct{}), notes: make(chan messages.Event, 64), retryWait: 250 * time.Millisecond}
	go s.sender()
	return s
}

func (s *remoteSession) ID() string { return s.id }

// note is what the session says to the REPL itself (an input that could
// not be sent, a failed cancel), delivered through the event stream so it
// prints in order with the session's events.
func (s *remoteSession) note(level, text string) {
	select {
	case s.notes <- messages.Notice{Level: level, Text: text}:
	default: // the REPL is not reading; it has more to show than notes
	}
}

// Submit queues the input for the sender and returns at once. The input's
// ID is its Idempotency-Key, so the server keeps one turn however often a
// network error makes the sender retry.
func (s *remoteSession) Submit(body string, mode messages.Mode) messages.UserMessage {
	in := messages.UserMessage{ID: uuid.NewString(), Body: body, Mode: mode, At: time.Now()}
	s.sendsMu.Lock()
	defer s.sendsMu.Unlock()
	if s.closed {
		return in
	}
	select {
	case s.sends <- remoteSend{key: in.ID, body: body, mode: mode}:
	default:
		s.note("warn", "too many inputs waiting to be sent; this one was dropped: "+firstLine(body))
	}
	return in
}

// SubmitImages sends the text: the API takes no images.
func (s *remoteSession) SubmitImages(body string, mode messages.Mode, images []messages.Image) messages.UserMessage {
	if len(images) > 0 {
		s.note("warn", fmt.Sprintf("%d image(s) not sent: odin serve's API takes text only", len(images)))
	}
	return s.Submit(body, mode)
}

// sender posts the inputs one at a time, in the order typed.
func (s *remoteSession) sender() {
	defer close(s.sent)
	for in := range s.sends {
		s.post(in)
	}
}

// sendAttempts bounds the retries of one input after network errors.
const sendAttempts = 6

func (s *remoteSession) post(in remoteSend) {
	hdr := http.Header{"Idempotency-Key": {in.key}}
	body := map[string]string{"body": in.body, "mode": string(in.mode)}
	wait := s.retryWait
	var err error
	for attempt := 1; attempt <= sendAttempts; attempt++ {
		// A detach does not drop what was typed before it: the send
		// outlives the attachment by its own timeout.
		_, err = s.c.call(context.WithoutCancel(s.ctx), http.MethodPost, sessionPath(s.id, "/messages"), hdr, body, nil)
		var ae *apiError
		if err == nil || errors.As(err, &ae) && ae.Code < 500 {
			break
		}
		if attempt < sendAttempts {
			time.Sleep(wait)
			wait = min(wait*2, 5*time.Second)
		}
	}
	if err != nil {
		s.note("warn", "input not sent: "+err.Error()+": "+firstLine(in.body))
	}
}

func (s *remoteSession) Cancel(string) {
	go func() {
		if _, err := s.c.call(s.ctx, http.MethodPost, sessionPath(s.id, "/cancel"), nil, nil, nil); err != nil && s.ctx.Err() == nil {
			s.note("warn", "cancel: "+err.Error())
		}
	}()
}

func (s *remoteSession) Queue(ctx context.Context) (*messages.QueueState, error) {
	return s.c.queue(ctx, s.id)
}

func (s *remoteSession) Remove(ctx context.Context, id string) (*messages.QueueState, error) {
	var qs messages.QueueState
	if _, err := s.c.call(ctx, http.MethodDelete, sessionPath(s.id, "/queue/", id), nil, nil, &qs); err != nil {
		return nil, err
	}
	return &qs, nil
}

// Answer answers an approval; one another client answered first is
// policy.ErrUnknownApproval, which the REPL passes over (the session's
// approval_resolved event says how it was answered).
func (s *remoteSession) Answer(id string, d policy.Decision) error {
	_, err := s.c.call(s.ctx, http.MethodPost, sessionPath(s.id, "/approvals/", id), nil, map[string]string{"decision": string(d)}, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == http.StatusNotFound {
		return fmt.Errorf("%w: %s", policy.ErrUnknownApproval, id)
	}
	return err
}

func (s *remoteSession) Pending() []messages.ApprovalRequested {
	var out []messages.ApprovalRequested
	if _, err := s.c.call(s.ctx, http.MethodGet, sessionPath(s.id, "/approvals"), nil, nil, &out); err != nil {
		s.note("warn", "pending approvals: "+err.Error())
		return nil
	}
	return out
}

// AnswerElicitation answers an MCP server's request for input through the
// server, as the local REPL answers it in process; the server checks the
// content against the form (400 leaves the request pending).
func (s *remoteSession) AnswerElicitation(id, action string, content map[string]any) error {
	body := map[string]any{"action": action}
	if action == "accept" {
		body["content"] = content
	}
	_, err := s.c.call(s.ctx, http.MethodPost, sessionPath(s.id, "/elicitations/", id), nil, body, nil)
	return err
}

// PendingElicitations lists the requests waiting on the server, asked
// before this client attached.
func (s *remoteSession) PendingElicitations() []messages.ElicitationRequested {
	var out []messages.ElicitationRequested
	if _, err := s.c.call(s.ctx, http.MethodGet, sessionPath(s.id, "/elicitations"), nil, nil, &out); err != nil {
		s.note("warn", "pending MCP requests: "+err.Error())
		return nil
	}
	return out
}

// Close detaches: the inputs typed so far are sent (within ctx), the
// event stream ends, and the session goes on running on the server.
func (s *remoteSession) Close(ctx context.Context) error {
	s.sendsMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.sends)
	}
	s.sendsMu.Unlock()
	var err error
	select {
	case <-s.sent:
	case <-ctx.Done():
		err = fmt.Errorf("detach: inputs still being sent: %w", ctx.Err())
	}
	s.stop()
	return err
}

// Subscribe streams the session's events from where the attachment
// started: first the initial events, then the server's stream, re-opened
// after the last event received when it drops. Records already seen are
// skipped, and events the server no longer holds become one Resync, so
// nothing prints twice and a loss is said. The channel closes when ctx
// ends or the server closes the session.
func (s *remoteSession) Subscribe(ctx context.Context) <-chan messages.Envelope {
	out := make(chan messages.Envelope, 1024)
	go s.pump(ctx, out)
	return out
}

func (s *remoteSession) pump(ctx context.Context, out chan<- messages.Envelope) {
	defer close(out)
	emit := func(env messages.Envelope) bool {
		if env.Session == "" {
			env.Session = s.id
		}
		if env.Time.IsZero() {
			env.Time = time.Now()
		}
		select {
		case out <- env:
			return true
		case <-ctx.Done():
			return false
		}
	}
	st := &streamState{last: s.start, turns: s.storedTurns}
	for _, ev := range s.initial {
		// The running turn's input is stored already: counted in turns.
		st.track(ev, false)
		if !emit(messages.Envelope{Event: ev}) {
			return
		}
	}
	wait := s.retryWait
	dropped := false
	for {
		if dropped {
			// A restarted server numbers its events from 1 again: what it
			// holds is all new (checked before the stream opens, which
			// would otherwise wait for the old numbers).
			if info, err := s.c.session(ctx, s.id); err == nil && info.LastEvent < st.last {
				st.last = 0
				emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "odin serve restarted; events from before its restart that were not received are not shown"}})
			}
		}
		recs, err := s.c.openEvents(ctx, s.id, st.last)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ae *apiError
			if errors.As(err, &ae) && (ae.Code == http.StatusNotFound || ae.Code == http.StatusUnauthorized || ae.Code == http.StatusForbidden) {
				emit(messages.Envelope{Event: messages.Notice{Level: "error", Text: "event stream: " + err.Error() + "; /detach and attach again"}})
				s.forwardNotes(ctx, emit)
				return
			}
			if !dropped {
				dropped = true
				emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "connection to odin serve lost (" + err.Error() + "); reconnecting…"}})
			}
			if !s.pause(ctx, wait, emit) {
				return
			}
			wait = min(wait*2, 5*time.Second)
			continue
		}
		if dropped {
			dropped = false
			wait = s.retryWait
			emit(messages.Envelope{Event: messages.Notice{Level: "info", Text: fmt.Sprintf("reconnected to odin serve (after event %d)", st.last)}})
		}
		switch s.drain(ctx, recs, st, emit) {
		case streamEnded:
			return
		case streamShutdown:
			dropped = true
			if !s.pause(ctx, wait, emit) {
				return
			}
		case streamDropped:
			if ctx.Err() != nil {
				return
			}
			if !dropped {
				dropped = true
				emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "connection to odin serve lost; reconnecting…"}})
			}
			if !s.pause(ctx, wait, emit) {
				return
			}
			wait = min(wait*2, 5*time.Second)
		}
	}
}

// pause waits d, forwarding notes meanwhile; false when ctx ended.
func (s *remoteSession) pause(ctx context.Context, d time.Duration, emit func(messages.Envelope) bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case ev := <-s.notes:
			if !emit(messages.Envelope{Event: ev}) {
				return false
			}
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// forwardNotes keeps delivering notes once the stream is over for good.
func (s *remoteSession) forwardNotes(ctx context.Context, emit func(messages.Envelope) bool) {
	for {
		select {
		case ev := <-s.notes:
			if !emit(messages.Envelope{Event: ev}) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// streamState is where the stream stands: the last event delivered, and
// what the REPL was shown of the session (to mend after events were
// lost): the stored turns it has seen, the turn it shows running, the
// inputs it shows queued.
type streamState struct {
	last    uint64
	turns   int
	running string
	queued  []string
}

// track follows the events that change what the REPL shows as running,
// queued or done; live is false for the turn running at attach, whose
// stored input was counted already.
func (st *streamState) track(ev messages.Event, live bool) {
	switch ev := ev.(type) {
	case messages.TurnStarted:
		if live && !ev.Input.Resumed {
			st.turns++
		}
		st.running = ev.Input.ID
		st.queued = slices.DeleteFunc(st.queued, func(id string) bool { return id == ev.Input.ID })
	case messages.TurnFinished:
		st.running = ""
	case messages.InputQueued:
		st.queued = append(st.queued, ev.Input.ID)
	case messages.InputRemoved:
		st.queued = slices.DeleteFunc(st.queued, func(id string) bool { return id == ev.ID })
	}
}

// catchUp mends the REPL after the server said it no longer holds the
// events after st.last (a resync: the session was passivated, or its
// buffer moved on while the connection was down). The stream goes on
// from the server's newest event; what was missed is told from the
// stored transcript and the queue: the end of the turn shown running,
// the turns that ran meanwhile (their input and answer), the turn running
// now and the inputs queued now.
func (s *remoteSession) catchUp(ctx context.Context, st *streamState, emit func(messages.Envelope) bool) bool {
	info, err := s.c.session(ctx, s.id)
	var qs *messages.QueueState
	if err == nil {
		qs, err = s.c.queue(ctx, s.id)
	}
	var list []storedTurn
	if err == nil {
		list, _, err = s.c.transcript(ctx, s.id)
	}
	if err != nil {
		return emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "events were missed and the session's state could not be read (" + err.Error() + "); /detach and attach again"}})
	}
	dropped := 0
	if info.LastEvent > st.last {
		dropped = int(info.LastEvent - st.last)
		st.last = info.LastEvent
	}
	var evs []messages.Event
	evs = append(evs, messages.Resync{Dropped: dropped})
	runningID := ""
	if qs.Running != nil {
		runningID = qs.Running.ID
	}
	if st.running != "" && st.running != runningID {
		// The turn shown running ended meanwhile: its answer, as stored.
		res := messages.TurnResult{}
		if st.turns >= 1 && st.turns <= len(list) {
			res.Answer = list[st.turns-1].answer
		}
		evs = append(evs, messages.TurnFinished{Result: res})
	}
	end := len(list)
	if qs.Running != nil && runningID != st.running && end > st.turns {
		end-- // the running turn's input, shown below as it runs
	}
	if missed := list[min(st.turns, end):end]; len(missed) > 0 {
		evs = append(evs, messages.Notice{Level: "warn", Text: fmt.Sprintf("%d turn(s) ran while the events were missed; from the stored history:", len(missed))})
		for _, t := range missed {
			evs = append(evs, messages.Notice{Level: "info", Text: "❯ " + firstLine(t.user)})
			for i, l := range strings.Split(clip(t.answer, 8), "\n") {
				if i == 0 {
					l = "odin: " + l
				}
				evs = append(evs, messages.Notice{Level: "info", Text: l})
			}
		}
	}
	st.turns = max(st.turns, end)
	for _, id := range st.queued {
		if !slices.ContainsFunc(qs.Queued, func(q messages.UserMessage) bool { return q.ID == id }) && id != runningID {
			evs = append(evs, messages.InputRemoved{ID: id})
		}
	}
	if qs.Running != nil && runningID != st.running {
		evs = append(evs, messages.TurnStarted{Input: *qs.Running})
	}
	for i, q := range qs.Queued {
		if !slices.Contains(st.queued, q.ID) {
			evs = append(evs, messages.InputQueued{Input: q, Position: i + 1})
		}
	}
	for _, ev := range evs {
		st.track(ev, false)
		if !emit(messages.Envelope{Event: ev}) {
			return false
		}
	}
	if qs.Running != nil && runningID != "" && st.turns < len(list) {
		st.turns = len(list)
	}
	return true
}

type streamEnd int

const (
	streamDropped  streamEnd = iota // the connection ended: reconnect
	streamShutdown                  // the server is shutting down: reconnect
	streamEnded                     // the session was closed: stop
)

// drain delivers one connection's records.
func (s *remoteSession) drain(ctx context.Context, recs <-chan sseRecord, st *streamState, emit func(messages.Envelope) bool) streamEnd {
	for {
		var rec sseRecord
		var ok bool
		select {
		case rec, ok = <-recs:
			if !ok {
				return streamDropped
			}
		case ev := <-s.notes:
			if !emit(messages.Envelope{Event: ev}) {
				return streamEnded
			}
			continue
		case <-ctx.Done():
			return streamEnded
		}
		if rec.typ == "resync" {
			if !s.catchUp(ctx, st, emit) {
				return streamEnded
			}
			continue
		}
		if rec.id == 0 {
			continue // not an event of the session
		}
		if rec.id <= st.last {
			continue // seen before the connection dropped
		}
		if rec.id > st.last+1 {
			// A jump the server did not announce with a resync (it
			// would): say how many events are missing.
			if !emit(messages.Envelope{Event: messages.Resync{Dropped: int(rec.id - st.last - 1)}}) {
				return streamEnded
			}
		}
		st.last = rec.id
		switch rec.typ {
		case "closed":
			emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "the session was closed on the server; /detach to leave"}})
			s.forwardNotes(ctx, emit)
			return streamEnded
		case "shutdown":
			emit(messages.Envelope{Event: messages.Notice{Level: "warn", Text: "odin serve is shutting down; reconnecting when it is back…"}})
			return streamShutdown
		}
		env, known, err := decodeAttachEvent(rec.typ, rec.data)
		if err != nil {
			env, known = messages.Envelope{Event: messages.Notice{Level: "warn", Text: err.Error()}}, true
		}
		if !known {
			continue
		}
		st.track(env.Event, true)
		if !emit(env) {
			return streamEnded
		}
	}
}

// An attached REPL answers MCP servers' forms as the local one does.
var _ term.Elicitor = (*remoteSession)(nil)
