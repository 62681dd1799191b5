package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web"
)

// Errors of a Pool.
var (
	// ErrNoHelper: odin-browser was not found.
	ErrNoHelper = errors.New("browser: odin-browser, the process that drives Chromium, was not found beside odin, on PATH or in $ODIN_BROWSER; install it beside odin: go install github.com/odin-code/odin/cmd/odin-browser@latest (make build puts it in bin/)")
	// ErrNoChromium: no browser program was found.
	ErrNoChromium = errors.New("browser: no Chromium found (chromium, chromium-browser or google-chrome on PATH); install Debian's chromium (apt-get install chromium) or set web.browser.chromium")
	// ErrPoolClosed: the session has ended.
	ErrPoolClosed = errors.New("browser: the session's browsers are closed")
)

// HelperPath finds odin-browser: $ODIN_BROWSER, else beside the running
// executable, else on PATH; "" when there is none.
func HelperPath() string {
	if p := os.Getenv("ODIN_BROWSER"); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "odin-browser")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("odin-browser"); err == nil {
		return p
	}
	return ""
}

// ChromiumPath is the browser program: configured, else the first of
// chromium, chromium-browser, google-chrome on PATH; "" when none.
func ChromiumPath(configured string) string {
	if configured != "" {
		if p, err := exec.LookPath(configured); err == nil {
			return p
		}
		return ""
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// AllowHosts is the address policy's allow list for the page: WebFetch's
// (web.allow_hosts) plus the loopback hosts web.browser allows.
func AllowHosts(cfg config.Web) ([]string, error) {
	hosts := append([]string(nil), cfg.AllowHosts...)
	loop := []string{"localhost", "127.0.0.1", "::1"}
	if cfg.Browser.AllowLoopback {
		return append(hosts, loop...), nil
	}
	for _, port := range cfg.Browser.LoopbackPorts {
		if port < 1 || port > 65535 {
			return nil, fmt.Errorf("browser: web.browser.loopback_ports: %d is not a port", port)
		}
		for _, h := range loop {
			hosts = append(hosts, net.JoinHostPort(h, strconv.Itoa(port)))
		}
	}
	return hosts, nil
}

// Pool holds the browsers of a session, one per agent run, each started
// on the run's first command and closed by End (the run is over) or Close
// (the session is).
type Pool struct {
	helper   string
	chromium string
	launch   Launch
	// The address policy's settings: each browser gets a guarded
	// transport of its own, whose loopback connections go to its run's
	// loopback dialer (SetLoopback).
	hosts, deny []string
	timeout     time.Duration

	mu       sync.Mutex
	browsers map[string]*Browser
	loopback map[string]web.LoopbackDialer
	closed   bool
}

// NewPool builds a session's pool from the web configuration. launch
// confines odin-browser (the CLI passes its session's sandbox); nil runs
// it in a sandbox of its own (bubblewrap, else Landlock), or not at all. It fails
// on a malformed allow list; a missing odin-browser or Chromium is
// reported by the first command.
func NewPool(cfg config.Web, launch Launch) (*Pool, error) {
	hosts, err := AllowHosts(cfg)
	if err != nil {
		return nil, err
	}
	// Built once here so that a malformed list fails now, not on the
	// first command.
	if _, err := web.NewGuardedTransport(hosts, cfg.DenyHosts, cfg.Timeout); err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	return &Pool{helper: HelperPath(), chromium: ChromiumPath(cfg.Browser.Chromium), launch: launch,
		hosts: hosts, deny: cfg.DenyHosts, timeout: cfg.Timeout,
		browsers: map[string]*Browser{}, loopback: map[string]web.LoopbackDialer{}}, nil
}

// SetLoopback makes d the loopback dialer of run's browser: its page's
// requests to allowed loopback ports are offered to d first (the run's
// shell session, whose dev server listens in its sandbox), then to the
// host's loopback. The runs of other agents never see d. It stays until
// End(run); nil removes it.
func (p *Pool) SetLoopback(run string, d web.LoopbackDialer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d == nil {
		delete(p.loopback, run)
		return
	}
	p.loopback[run] = d
}

// dialLoopback is run's browser's loopback dialer: the one SetLoopback
// gave at the time of the request.
func (p *Pool) dialLoopback(ctx context.Context, run string, a netip.AddrPort) (net.Conn, error) {
	p.mu.Lock()
	d := p.loopback[run]
	p.mu.Unlock()
	if d == nil {
		return nil, web.ErrNoLoopback
	}
	return d(ctx, a)
}

// Do runs c in run's browser, starting it if needed; a browser that has
// exited is started afresh (its page is lost).
func (p *Pool) Do(ctx context.Context, run string, c Command) (*Result, error) {
	b, err := p.get(run)
	if err != nil {
		return nil, err
	}
	return b.Do(ctx, c)
}

func (p *Pool) get(run string) (*Browser, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	if b := p.browsers[run]; b != nil {
		return b, nil
	}
	if p.helper == "" {
		return nil, ErrNoHelper
	}
	if p.chromium == "" {
		return nil, ErrNoChromium
	}
	tr, err := web.NewGuardedTransportLoopback(p.hosts, p.deny, p.timeout, func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
		return p.dialLoopback(ctx, run, a)
	})
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	b := start(p.helper, p.chromium, p.launch, tr)
	p.browsers[run] = b
	return b, nil
}

// End closes run's browser, if it has one.
func (p *Pool) End(run string) {
	p.mu.Lock()
	b := p.browsers[run]
	delete(p.browsers, run)
	delete(p.loopback, run)
	p.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// Close closes every browser and refuses further commands.
func (p *Pool) Close() {
	p.mu.Lock()
	bs := p.browsers
	p.browsers, p.closed = map[string]*Browser{}, true
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Close()
		}()
	}
	wg.Wait()
}
