package helperproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// ErrGone is a request of the helper's that Odin will not answer: its
// input ended (Odin closed the pipe, or went).
var ErrGone = errors.New("odin has gone")

// ErrUnknownLine is a line of no Kind the helper serves; it ends Serve.
var ErrUnknownLine = errors.New("a line of unknown kind")

// queued bounds the calls waiting for a OneAtATime server; Odin's clients
// of such helpers send one at a time.
const queued = 16

// Server is the helper's side of the protocol, writing to Odin's pipe.
// Ask may be called from any goroutine.
type Server[M Message[M]] struct {
	oneAtATime bool

	wmu sync.Mutex
	out *bufio.Writer
	enc *json.Encoder

	mu      sync.Mutex
	calls   map[uint64]context.CancelFunc
	pending map[uint64]chan M
	nextReq uint64
	gone    chan struct{} // closed when Odin's input has ended
}

// NewServer returns the helper's side writing to w. oneAtATime runs calls
// one after another in their order (a browser has one page); otherwise
// each runs in its own goroutine.
func NewServer[M Message[M]](w io.Writer, oneAtATime bool) *Server[M] {
	s := &Server[M]{oneAtATime: oneAtATime, out: bufio.NewWriter(w), calls: map[uint64]context.CancelFunc{},
		pending: map[uint64]chan M{}, gone: make(chan struct{})}
	s.enc = json.NewEncoder(s.out)
	return s
}

// Serve reads Odin's lines from r until it ends and answers each call
// with handle's result, sent as the call's KindResult line; handle reads
// the call's ID from its Route to make requests for it. It returns nil at
// the end of input, else what ended it (a malformed line,
// ErrUnknownLine). Either way it first cancels the calls still running,
// fails the requests still waiting with ErrGone and waits for the calls.
func (s *Server[M]) Serve(r io.Reader, handle func(ctx context.Context, call M) M) error {
	var wg sync.WaitGroup
	type queuedCall struct {
		ctx context.Context
		m   M
	}
	run := func(c queuedCall) {
		id := c.m.Route().Call
		select {
		case <-s.gone:
			return // queued behind a call when Odin went: nobody waits for it
		default:
		}
		res := handle(c.ctx, c.m)
		s.mu.Lock()
		if cancel := s.calls[id]; cancel != nil {
			cancel()
			delete(s.calls, id)
		}
		s.mu.Unlock()
		_ = s.send(res.Routed(Route{Kind: KindResult, Call: id}))
	}
	var queue chan queuedCall
	if s.oneAtATime {
		queue = make(chan queuedCall, queued)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range queue {
				run(c)
			}
		}()
	}
	defer func() {
		s.mu.Lock()
		close(s.gone)
		for _, cancel := range s.calls {
			cancel()
		}
		s.mu.Unlock()
		if queue != nil {
			close(queue)
		}
		wg.Wait()
	}()
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	for {
		var m M
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		rt := m.Route()
		switch rt.Kind {
		case KindCall:
			// Registered before it runs, so that a cancel line that
			// follows at once finds it.
			ctx, cancel := context.WithCancel(context.Background())
			s.mu.Lock()
			s.calls[rt.Call] = cancel
			s.mu.Unlock()
			c := queuedCall{ctx: ctx, m: m}
			if queue != nil {
				queue <- c
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(c)
			}()
		case KindCancel:
			s.mu.Lock()
			if cancel := s.calls[rt.Call]; cancel != nil {
				cancel()
			}
			s.mu.Unlock()
		case KindResponse:
			s.mu.Lock()
			ch := s.pending[rt.Req]
			delete(s.pending, rt.Req)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return ErrUnknownLine
		}
	}
}

// Ask sends m to Odin as a request for call (0: for none) and waits for
// Odin's answer. It fails with ErrGone once Odin's input has ended, with
// ctx's cause when ctx ends first, or with the error of writing to Odin.
func (s *Server[M]) Ask(ctx context.Context, call uint64, m M) (M, error) {
	var zero M
	ch := make(chan M, 1)
	s.mu.Lock()
	select {
	case <-s.gone:
		s.mu.Unlock()
		return zero, ErrGone
	default:
	}
	s.nextReq++
	n := s.nextReq
	s.pending[n] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, n)
		s.mu.Unlock()
	}
	if err := s.send(m.Routed(Route{Kind: KindRequest, Call: call, Req: n})); err != nil {
		forget()
		return zero, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-s.gone:
		forget()
		return zero, ErrGone
	case <-ctx.Done():
		forget()
		select {
		case <-s.gone: // the calls' contexts end because Odin went
			return zero, ErrGone
		default:
		}
		return zero, context.Cause(ctx)
	}
}

func (s *Server[M]) send(m M) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.enc.Encode(m); err != nil {
		return err
	}
	return s.out.Flush()
}
