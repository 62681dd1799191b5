package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Launch starts argv (odin-fetch) the way Odin confines its helper
// processes: in the session's sandbox, with no network, nothing writable
// and no secret in its environment. It returns the command, not started,
// and a release function to call once it has exited.
type Launch func(ctx context.Context, argv []string) (*exec.Cmd, func(), error)

// WithLaunch sets how odin-fetch is started (the CLI passes its sandbox);
// without it odin-fetch runs as a plain child with an empty environment.
func WithLaunch(l Launch) Option { return func(o *options) { o.launch = l } }

// FetchPath finds odin-fetch: $ODIN_FETCH, else beside the running
// executable, else on PATH; "" when there is none.
func FetchPath() string {
	if p := os.Getenv("ODIN_FETCH"); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "odin-fetch")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("odin-fetch"); err == nil {
		return p
	}
	return ""
}

// errNoFetcher is a fetch without an odin-fetch binary to parse the page.
var errNoFetcher = errors.New("web: odin-fetch, the process that fetches and converts pages, was not found beside odin, on PATH or in $ODIN_FETCH; install it beside odin: go install github.com/odin-code/odin/cmd/odin-fetch@latest (make build puts it in bin/)")

// proc is the odin-fetch process, started on the first fetch and again
// after it exits; its fetches are multiplexed over one pipe by ID.
type proc struct {
	path   string
	launch Launch

	mu     sync.Mutex
	cur    *child
	nextID uint64
	closed bool
}

func newProc(path string, launch Launch) *proc { return &proc{path: path, launch: launch} }

// child is one running odin-fetch.
type child struct {
	cmd     *exec.Cmd
	release func()
	stdin   io.WriteCloser
	stderr  *tail

	wmu sync.Mutex
	enc *json.Encoder

	mu    sync.Mutex
	calls map[uint64]*call
	err   error // why it ended, once done is closed
	done  chan struct{}
}

// call is one fetch in flight: its context (the requests it makes run
// under it), how they are made, and where its result goes.
type call struct {
	ctx    context.Context
	do     func(context.Context, Msg) Msg
	result chan Msg
}

// fetch sends m to odin-fetch and serves its requests with do until the
// result comes, ctx ends, or the process dies.
func (p *proc) fetch(ctx context.Context, m Msg, do func(context.Context, Msg) Msg) (*Page, error) {
	c, id, err := p.start()
	if err != nil {
		return nil, err
	}
	m.ID = id
	cl := &call{ctx: ctx, do: do, result: make(chan Msg, 1)}
	c.mu.Lock()
	if c.calls == nil {
		c.mu.Unlock()
		return nil, c.failure()
	}
	c.calls[id] = cl
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.calls != nil {
			delete(c.calls, id)
		}
		c.mu.Unlock()
	}()
	if err := c.send(m); err != nil {
		// A process that died before reading says why on its way out.
		select {
		case <-c.done:
			return nil, c.failure()
		case <-time.After(2 * time.Second):
			return nil, fmt.Errorf("web: odin-fetch: %w", err)
		}
	}
	select {
	case r := <-cl.result:
		if r.Err != nil {
			return nil, r.Err.Err()
		}
		if r.Page == nil {
			return nil, errors.New("web: odin-fetch answered without a page")
		}
		return r.Page, nil
	case <-ctx.Done():
		_ = c.send(Msg{Op: OpCancel, ID: id})
		return nil, context.Cause(ctx)
	case <-c.done:
		return nil, c.failure()
	}
}

// start returns the running process, starting one if needed, and a new
// fetch ID.
func (p *proc) start() (*child, uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, 0, errors.New("web: the fetcher is closed")
	}
	p.nextID++
	if p.cur != nil {
		select {
		case <-p.cur.done:
			p.cur = nil
		default:
			return p.cur, p.nextID, nil
		}
	}
	if p.path == "" {
		return nil, 0, errNoFetcher
	}
	argv := []string{p.path}
	var (
		cmd     *exec.Cmd
		release func()
		err     error
	)
	if p.launch != nil {
		cmd, release, err = p.launch(context.Background(), argv)
		if err != nil {
			return nil, 0, fmt.Errorf("web: start odin-fetch: %w", err)
		}
	} else {
		cmd = exec.Command(argv[0])
		cmd.Env = []string{}
	}
	c := &child{cmd: cmd, release: release, stderr: &tail{}, calls: map[uint64]*call{}, done: make(chan struct{})}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		if release != nil {
			release()
		}
		return nil, 0, fmt.Errorf("web: start odin-fetch (%s): %w", p.path, err)
	}
	c.stdin, c.enc = in, json.NewEncoder(in)
	go c.read(out)
	p.cur = c
	return c, p.nextID, nil
}

// close stops the process and waits for it.
func (p *proc) close() {
	p.mu.Lock()
	c := p.cur
	p.cur, p.closed = nil, true
	p.mu.Unlock()
	if c == nil {
		return
	}
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func (c *child) send(m Msg) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.enc.Encode(m)
}

// read dispatches odin-fetch's messages until its output ends, then reaps
// it and fails the fetches still waiting.
func (c *child) read(out io.Reader) {
	dec := json.NewDecoder(bufio.NewReaderSize(out, 1<<20))
	var wg sync.WaitGroup
	var err error
	for {
		var m Msg
		if err = dec.Decode(&m); err != nil {
			break
		}
		c.mu.Lock()
		cl := c.calls[m.ID]
		c.mu.Unlock()
		if cl == nil {
			// A late message of a fetch that gave up.
			continue
		}
		switch m.Op {
		case OpHTTP:
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.send(cl.do(cl.ctx, m))
			}()
		case OpResult:
			cl.result <- m
		}
	}
	_ = c.stdin.Close()
	wg.Wait()
	werr := c.cmd.Wait()
	if c.release != nil {
		c.release()
	}
	c.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = werr
	}
	if msg := c.stderr.String(); msg != "" {
		err = fmt.Errorf("%v: %s", err, msg)
	}
	c.err = err
	c.calls = nil
	c.mu.Unlock()
	close(c.done)
}

func (c *child) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return errors.New("web: odin-fetch exited")
	}
	return fmt.Errorf("web: odin-fetch exited: %w", c.err)
}

// tail keeps the last line odin-fetch wrote to stderr, to say why it
// died.
type tail struct {
	mu   sync.Mutex
	last string
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(b)); s != "" {
		lines := strings.Split(s, "\n")
		t.last = lines[len(lines)-1]
		if len(t.last) > 300 {
			t.last = t.last[:300]
		}
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}
