package helperproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/odin-code/odin/internal/sandbox"
)

// ErrClosed is a call on a Client after Close.
var ErrClosed = errors.New("closed")

// ErrTooManyStarts is a call on a Client whose helper has been started
// Config.MaxStarts times already.
var ErrTooManyStarts = errors.New("failed too often")

// sendGrace is how long a call whose line could not be written waits for
// the helper to exit and say why, before stopping it.
const sendGrace = 2 * time.Second

// Config says how a Client starts its helper and treats its calls.
type Config[M Message[M]] struct {
	// Name is the helper's program name (odin-fetch) and Prefix the
	// package its errors start with (web).
	Name, Prefix string
	// Path is the helper's executable; "" fails every call with
	// NotFound.
	Path     string
	NotFound error
	// Launch starts the helper confined; nil is Sandboxed(nil,
	// sandbox.Spec{}): bubblewrap, else Landlock, else a refusal.
	Launch Launch
	// Exited is what a call gets when the helper has died, wrapped with
	// why; default "<Prefix>: <Name> exited".
	Exited error
	// StopOnCancel stops the helper when a call's context ends: its state
	// is unknown (a browser mid-command), and the next call starts a
	// fresh one. Otherwise the helper is sent a KindCancel line and keeps
	// serving the other calls.
	StopOnCancel bool
	// Serve answers the helper's requests made outside any call
	// (Route.Call 0, a page's own requests between commands), under a
	// context that ends with the process. Nil leaves them unanswered.
	Serve func(context.Context, M) M
	// MaxStarts bounds how often the helper is started over the Client's
	// life (a parser that keeps crashing is given up on); 0 is no bound.
	MaxStarts int
	// Grace is how long a helper whose input was closed has to exit
	// before it is killed; default 2s.
	Grace time.Duration
}

// Client is a helper process serving calls: started on the first call
// through the sandbox, again on the next call after it died. Calls may be
// made concurrently; they share the one pipe, routed by ID. Close stops
// the helper for good.
type Client[M Message[M]] struct {
	cfg Config[M]

	mu      sync.Mutex
	cur     *proc[M]
	nextID  uint64
	starts  int
	lastErr error // why the last helper ended, for ErrTooManyStarts
	closed  bool
}

// New returns a Client; nothing starts before the first call.
func New[M Message[M]](cfg Config[M]) *Client[M] {
	if cfg.Exited == nil {
		cfg.Exited = fmt.Errorf("%s: %s exited", cfg.Prefix, cfg.Name)
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 2 * time.Second
	}
	if cfg.Launch == nil {
		cfg.Launch = Sandboxed(nil, sandbox.Spec{})
	}
	return &Client[M]{cfg: cfg}
}

// Call sends m to the helper as a new call and returns the helper's
// KindResult line. serve answers the requests the helper makes for this
// call (nil: Config.Serve), under a context that ends with the call or
// the helper. An error is the helper's failure (Config.Exited, wrapped
// with its exit status and last stderr line; a refused or failed start)
// or ctx's cause; a failure the protocol reports in its result is the
// caller's to read.
func (c *Client[M]) Call(ctx context.Context, m M, serve func(context.Context, M) M) (M, error) {
	var zero M
	p, id, err := c.start()
	if err != nil {
		return zero, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if serve == nil {
		serve = c.cfg.Serve
	}
	cl := &call[M]{ctx: cctx, cancel: cancel, serve: serve, result: make(chan M, 1)}
	if !p.add(id, cl) {
		return zero, p.failure()
	}
	defer p.remove(id)
	if err := p.send(m.Routed(Route{Kind: KindCall, Call: id})); err != nil {
		// A helper that stopped reading is on its way out and says why.
		select {
		case <-p.done:
			return zero, p.failure()
		case <-time.After(sendGrace):
			p.stop()
			return zero, fmt.Errorf("%w: %w", c.cfg.Exited, err)
		}
	}
	select {
	case r := <-cl.result:
		return r, nil
	case <-ctx.Done():
		if c.cfg.StopOnCancel {
			p.stop()
		} else {
			_ = p.send(zero.Routed(Route{Kind: KindCancel, Call: id}))
		}
		return zero, context.Cause(ctx)
	case <-p.done:
		return zero, p.failure()
	}
}

// Close stops the helper (closing its input, killing it after
// Config.Grace) and waits for it; later calls fail with ErrClosed.
func (c *Client[M]) Close() {
	c.mu.Lock()
	p := c.cur
	c.cur, c.closed = nil, true
	c.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// start returns the running helper, starting one if there is none or it
// has ended, and a new call ID.
func (c *Client[M]) start() (*proc[M], uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, 0, fmt.Errorf("%s: %s: %w", c.cfg.Prefix, c.cfg.Name, ErrClosed)
	}
	c.nextID++
	if p := c.cur; p != nil {
		if p.live() {
			return p, c.nextID, nil
		}
		c.cur = nil
		if p.ended() {
			c.lastErr = p.failure()
		}
	}
	if c.cfg.Path == "" {
		return nil, 0, c.cfg.NotFound
	}
	if c.cfg.MaxStarts > 0 && c.starts >= c.cfg.MaxStarts {
		return nil, 0, fmt.Errorf("%s: %s %w (%d starts; the last: %v)", c.cfg.Prefix, c.cfg.Name, ErrTooManyStarts, c.starts, c.lastErr)
	}
	c.starts++
	p, err := c.launch()
	if err != nil {
		c.lastErr = err
		return nil, 0, err
	}
	c.cur = p
	return p, c.nextID, nil
}

func (c *Client[M]) launch() (*proc[M], error) {
	cmd, release, err := c.cfg.Launch(context.Background(), []string{c.cfg.Path})
	if err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", c.cfg.Prefix, c.cfg.Name, err)
	}
	if release == nil {
		release = func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc[M]{cfg: &c.cfg, cmd: cmd, release: release, stderr: &tail{}, ctx: ctx, cancel: cancel,
		calls: map[uint64]*call[M]{}, done: make(chan struct{})}
	fail := func(err error) (*proc[M], error) {
		cancel()
		release()
		return nil, fmt.Errorf("%s: start %s (%s): %w", c.cfg.Prefix, c.cfg.Name, c.cfg.Path, err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	p.stdin, p.enc = in, json.NewEncoder(in)
	go p.read(out)
	return p, nil
}

// proc is one running helper.
type proc[M Message[M]] struct {
	cfg     *Config[M]
	cmd     *exec.Cmd
	release func()
	stdin   io.WriteCloser
	stderr  *tail
	// ctx ends with the process: the requests made outside calls run
	// under it.
	ctx     context.Context
	cancel  context.CancelFunc
	stopped atomic.Bool // stop was called: no new call may use it

	wmu sync.Mutex
	enc *json.Encoder

	mu    sync.Mutex
	calls map[uint64]*call[M] // nil once done
	err   error               // why it ended, once done is closed
	done  chan struct{}
}

// call is one call in flight: the context its requests run under (it
// ends with the call or the process), how they are answered, and where
// its result goes.
type call[M any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	serve  func(context.Context, M) M
	result chan M
}

func (p *proc[M]) live() bool { return !p.stopped.Load() && !p.ended() }

func (p *proc[M]) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc[M]) add(id uint64, cl *call[M]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		return false
	}
	p.calls[id] = cl
	return true
}

func (p *proc[M]) remove(id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls != nil {
		delete(p.calls, id)
	}
}

func (p *proc[M]) send(m M) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.enc.Encode(m)
}

// stop closes the helper's input, kills it if it has not exited after
// Grace, and waits until it is reaped.
func (p *proc[M]) stop() {
	p.stopped.Store(true)
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(p.cfg.Grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// read dispatches the helper's lines until its output ends, then reaps
// it and fails the calls still waiting.
func (p *proc[M]) read(out io.Reader) {
	dec := json.NewDecoder(bufio.NewReaderSize(out, 1<<20))
	var wg sync.WaitGroup
	var err error
	for {
		var m M
		if err = dec.Decode(&m); err != nil {
			break
		}
		r := m.Route()
		switch r.Kind {
		case KindResult:
			p.mu.Lock()
			cl := p.calls[r.Call]
			p.mu.Unlock()
			if cl != nil {
				select {
				case cl.result <- m:
				default: // a second result of the same call
				}
			}
		case KindRequest:
			ctx, serve := p.handler(r.Call)
			if serve == nil {
				// A late request of a call that gave up, or one nobody
				// answers: the helper's own deadline ends it.
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = p.send(serve(ctx, m).Routed(Route{Kind: KindResponse, Call: r.Call, Req: r.Req}))
			}()
		}
	}
	p.cancel()
	p.mu.Lock()
	for _, cl := range p.calls {
		cl.cancel()
	}
	p.mu.Unlock()
	_ = p.stdin.Close()
	werr := p.wait()
	wg.Wait()
	p.release()
	p.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = werr
	}
	if msg := p.stderr.String(); msg != "" {
		if err == nil {
			err = errors.New(msg)
		} else {
			err = fmt.Errorf("%w: %s", err, msg)
		}
	}
	p.err = err
	p.calls = nil
	p.mu.Unlock()
	close(p.done)
}

// handler is how a request of call id is answered, and under which
// context; a nil function when it is not.
func (p *proc[M]) handler(id uint64) (context.Context, func(context.Context, M) M) {
	if id == 0 {
		return p.ctx, p.cfg.Serve
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cl := p.calls[id]; cl != nil {
		return cl.ctx, cl.serve
	}
	return nil, nil
}

// wait reaps the helper, whose output has ended: a helper that closed its
// output but lingers is killed after Grace.
func (p *proc[M]) wait() error {
	waited := make(chan error, 1)
	go func() { waited <- p.cmd.Wait() }()
	select {
	case err := <-waited:
		return err
	case <-time.After(p.cfg.Grace):
		_ = p.cmd.Process.Kill()
		return <-waited
	}
}

// failure is why the helper ended, as Config.Exited.
func (p *proc[M]) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return p.cfg.Exited
	}
	return fmt.Errorf("%w: %w", p.cfg.Exited, p.err)
}
