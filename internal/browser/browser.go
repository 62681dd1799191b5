package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"sync"
	"time"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/sandbox"
)

// Launch starts argv (odin-browser) confined: in the session's sandbox,
// with no network, nothing writable but its private /tmp and no secret in
// its environment. It returns the command, not started, and a release
// function to call once it has exited (helperproc.Launch's shape).
type Launch func(ctx context.Context, argv []string) (*exec.Cmd, func(), error)

// maxBody caps one response body handed to the page: pages load scripts
// and images larger than WebFetch's text pages.
const maxBody = 32 << 20

// requestTimeout bounds one request of the page.
const requestTimeout = 30 * time.Second

// Browser is one odin-browser process and its Chromium, serving one agent
// run; a browser that died is started afresh by the next command (its
// page is lost). Commands run one at a time; the page's requests are
// served concurrently.
type Browser struct {
	chromium  string
	transport http.RoundTripper
	proc      *helperproc.Client[Msg]

	cmdMu sync.Mutex // one command at a time

	mu      sync.Mutex
	blocked []string
}

// start prepares the browser of a run: odin-browser starts with its first
// command, Chromium inside it with the same command. Without a launch it
// runs in a sandbox of its own (bubblewrap, else Landlock), or not at all.
func start(path, chromium string, launch Launch, transport http.RoundTripper) *Browser {
	b := &Browser{chromium: chromium, transport: transport}
	l := helperproc.Launch(launch)
	if l == nil {
		l = helperproc.Sandboxed(nil, sandbox.Spec{UnixSockets: true})
	}
	// A command cut short leaves the page in an unknown state: the browser
	// goes (StopOnCancel), and the next command starts a fresh one.
	b.proc = helperproc.New(helperproc.Config[Msg]{Name: "odin-browser", Prefix: "browser", Path: path,
		Launch: l, Exited: ErrClosed, StopOnCancel: true, Serve: b.serve, Grace: 3 * time.Second})
	return b
}

// Do runs one command and returns its result. A command the browser
// reports failing (no such element, a navigation refused) is an error the
// model can act on; ErrClosed says the process is gone.
func (b *Browser) Do(ctx context.Context, c Command) (*Result, error) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	c.Chromium = b.chromium
	b.mu.Lock()
	b.blocked = nil
	b.mu.Unlock()
	r, err := b.proc.Call(ctx, Msg{Command: &c}, nil)
	b.mu.Lock()
	blocked := b.blocked
	b.blocked = nil
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if r.Err != "" {
		return nil, &CommandError{Msg: r.Err, Blocked: blocked}
	}
	if r.Result == nil {
		return nil, errors.New("browser: odin-browser answered without a result")
	}
	r.Result.Blocked = append(blocked, r.Result.Refused...)
	return r.Result, nil
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
func (b *Browser) Close() { b.proc.Close() }

// dropRequest are request headers Odin sets itself: the transport asks
// for and decodes compression, and frames the body.
var dropRequest = []string{"Accept-Encoding", "Connection", "Content-Length", "Host", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// dropResponse are response headers that describe the body as it came
// over the wire, not as the page gets it.
var dropResponse = []string{"Connection", "Content-Encoding", "Content-Length", "Keep-Alive", "Trailer", "Transfer-Encoding", "Upgrade"}

// serve makes one request of the page through the guarded transport,
// under ctx, which ends with the process.
func (b *Browser) serve(ctx context.Context, m Msg) Msg {
	out := Msg{} // helperproc routes it
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
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
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
