package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

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
	helper    string
	chromium  string
	launch    Launch
	transport http.RoundTripper

	mu       sync.Mutex
	browsers map[string]*Browser
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
	tr, err := web.NewGuardedTransport(hosts, cfg.DenyHosts, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	return &Pool{helper: HelperPath(), chromium: ChromiumPath(cfg.Browser.Chromium), launch: launch,
		transport: tr, browsers: map[string]*Browser{}}, nil
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
	b := start(p.helper, p.chromium, p.launch, p.transport)
	p.browsers[run] = b
	return b, nil
}

// End closes run's browser, if it has one.
func (p *Pool) End(run string) {
	p.mu.Lock()
	b := p.browsers[run]
	delete(p.browsers, run)
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
