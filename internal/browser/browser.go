package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Launch starts argv (odin-browser) confined: in the session's sandbox,
// with no network, nothing writable but its private /tmp and no secret in
// its environment. It returns the command, not started, and a release
// function to call once it has exited (web.Launch's shape).
type Launch func(ctx context.Context, argv []string) (*exec.Cmd, func(), error)

// maxBody caps one response body handed to the page: pages load scripts
// and images larger than WebFetch's text pages.
const maxBody = 32 << 20

// requestTimeout bounds one request of the page.
const requestTimeout = 30 * time.Second

// Browser is one odin-browser process and its Chromium, serving one agent
// run. Commands run one at a time; the page's requests are served
// concurrently.
type Browser struct {
	chromium  string
	transport http.RoundTripper

	cmdMu sync.Mutex // one command at a time

	cmd     *exec.Cmd
	release func()
	stdin   io.WriteCloser
	stderr  *tail
	wmu     sync.Mutex
	enc     *json.Encoder
	ctx     context.Context // the page's requests run under it
	cancel  context.CancelFunc

	mu      sync.Mutex
	nextID  uint64
	waiting map[uint64]chan Msg
	blocked []string
	err     error
	done    chan struct{}
}

// start launches odin-browser at path; Chromium itself starts with the
// first command.
func start(path, chromium string, launch Launch, transport http.RoundTripper) (*Browser, error) {
	argv := []string{path}
	var (
		cmd     *exec.Cmd
		release func()
		err     error
	)
	if launch != nil {
		if cmd, release, err = launch(context.Background(), argv); err != nil {
			return nil, fmt.Errorf("browser: start odin-browser: %w", err)
		}
	} else {
		cmd = exec.Command(argv[0])
		cmd.Env = []string{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Browser{chromium: chromium, transport: transport, cmd: cmd, release: release, stderr: &tail{},
		ctx: ctx, cancel: cancel, waiting: map[uint64]chan Msg{}, done: make(chan struct{})}
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		if release != nil {
			release()
		}
		return nil, fmt.Errorf("browser: start odin-browser (%s): %w", path, err)
	}
	b.stdin, b.enc = in, json.NewEncoder(in)
	go b.read(out)
	return b, nil
}

// Do runs one command and returns its result. A command the browser
// reports failing (no such element, a navigation refused) is an error the
// model can act on; ErrClosed says the process is gone.
func (b *Browser) Do(ctx context.Context, c Command) (*Result, error) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	c.Chromium = b.chromium
	ch := make(chan Msg, 1)
	b.mu.Lock()
	if b.waiting == nil {
		b.mu.Unlock()
		return nil, b.failure()
	}
	b.nextID++
	id := b.nextID
	b.waiting[id] = ch
	b.blocked = nil
	b.mu.Unlock()
	if err := b.send(Msg{Op: OpDo, ID: id, Command: &c}); err != nil {
		// A process that stopped reading is on its way out and says why.
		select {
		case <-b.done:
			return nil, b.failure()
		case <-time.After(2 * time.Second):
			b.Close()
			return nil, fmt.Errorf("%w: %v", ErrClosed, err)
		}
	}
	select {
	case r := <-ch:
		b.mu.Lock()
		blocked := b.blocked
		b.blocked = nil
		b.mu.Unlock()
		if r.Err != "" {
			return nil, &CommandError{Msg: r.Err, Blocked: blocked}
		}
		if r.Result == nil {
			return nil, errors.New("browser: odin-browser answered without a result")
		}
		r.Result.Blocked = append(blocked, r.Result.Refused...)
		return r.Result, nil
	case <-ctx.Done():
		// The browser is mid-command and its state unknown: it goes,
		// and the next command starts a fresh one.
		b.Close()
		return nil, context.Cause(ctx)
	case <-b.done:
		return nil, b.failure()
	}
}

// CommandError is a command the browser could not carry out; Blocked are
// the page's requests refused meanwhile.
type CommandError struct {
	Msg     string
	Blocked []string
}

func (e *CommandError) Error() string { return e.Msg }

// ErrClosed is a command sent to a browser that has exited.
var ErrClosed = errors.New("browser: odin-browser exited")

// Close ends odin-browser (and so Chromium, which it started inside the
// same sandbox) and waits for it.
func (b *Browser) Close() {
	_ = b.stdin.Close()
	select {
	case <-b.done:
	case <-time.After(3 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
}

func (b *Browser) send(m Msg) error {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.enc.Encode(m)
}

// read dispatches odin-browser's messages until its output ends, then
// reaps it.
func (b *Browser) read(out io.Reader) {
	dec := json.NewDecoder(bufio.NewReaderSize(out, 1<<20))
	var wg sync.WaitGroup
	var err error
	for {
		var m Msg
		if err = dec.Decode(&m); err != nil {
			break
		}
		switch m.Op {
		case OpHTTP:
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = b.send(b.serve(m))
			}()
		case OpResult:
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
	b.cancel()
	_ = b.stdin.Close()
	// A process that stops reading must not hold odin: its pipe is gone,
	// so a request still being served only loses its answer.
	_ = b.cmd.Process.Kill()
	wg.Wait()
	werr := b.cmd.Wait()
	if b.release != nil {
		b.release()
	}
	b.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = werr
	}
	if msg := b.stderr.String(); msg != "" {
		err = fmt.Errorf("%v: %s", err, msg)
	}
	b.err = err
	b.waiting = nil
	b.mu.Unlock()
	close(b.done)
}

func (b *Browser) failure() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		return ErrClosed
	}
	return fmt.Errorf("%w: %v", ErrClosed, b.err)
}

// dropRequest are request headers Odin sets itself: the transport asks
// for and decodes compression, and frames the body.
var dropRequest = []string{"Accept-Encoding", "Connection", "Content-Length", "Host", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// dropResponse are response headers that describe the body as it came
// over the wire, not as the page gets it.
var dropResponse = []string{"Connection", "Content-Encoding", "Content-Length", "Keep-Alive", "Trailer", "Transfer-Encoding", "Upgrade"}

// serve makes one request of the page through the guarded transport.
func (b *Browser) serve(m Msg) Msg {
	out := Msg{Op: OpHTTPResp, ID: m.ID, Req: m.Req}
	fail := func(err error) Msg {
		b.mu.Lock()
		b.blocked = append(b.blocked, fmt.Sprintf("%s %s: %v", m.Method, m.URL, err))
		b.mu.Unlock()
		out.Err = err.Error()
		return out
	}
	u, err := url.Parse(m.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fail(fmt.Errorf("not an http or https URL"))
	}
	ctx, cancel := context.WithTimeout(b.ctx, requestTimeout)
	defer cancel()
	var body io.Reader
	if len(m.Body) > 0 {
		body = bytes.NewReader(m.Body)
	}
	req, err := http.NewRequestWithContext(ctx, m.Method, u.String(), body)
	if err != nil {
		return fail(err)
	}
	req.Header = m.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, h := range dropRequest {
		req.Header.Del(h)
	}
	resp, err := b.transport.RoundTrip(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fail(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fail(err)
	}
	out.Status, out.Header, out.Body = resp.StatusCode, resp.Header.Clone(), data
	for _, h := range dropResponse {
		out.Header.Del(h)
	}
	return out
}

// tail keeps the last line odin-browser wrote to stderr, to say why it
// died.
type tail struct {
	mu   sync.Mutex
	last string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(p)); s != "" {
		lines := strings.Split(s, "\n")
		t.last = lines[len(lines)-1]
		if len(t.last) > 300 {
			t.last = t.last[:300]
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}
