package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/config"
)

// Defaults applied when the configuration leaves a value at zero.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 5 << 20
	// DefaultCacheTTL is web.cache_ttl's default (config.Default sets it).
	DefaultCacheTTL = 15 * time.Minute
	// DefaultBudget is the size of the text a fetch returns, in bytes:
	// about 25k tokens, which a small model reads comfortably.
	DefaultBudget = 100_000
	// MaxRedirects is how many same-host redirects a fetch follows.
	MaxRedirects = 5
	// maxURLLength guards against URLs used as a payload.
	maxURLLength = 4096
)

// Page is the result of a fetch: the text of a page ready for a model, or
// the reason there is none (a binary body, a redirect to another host).
type Page struct {
	// URL is the URL fetched, after http was upgraded to https.
	URL string `json:"url"`
	// FinalURL is where same-host redirects ended.
	FinalURL string `json:"final_url"`
	// Status is the HTTP status of the final response.
	Status int      `json:"status"`
	Kind   PageKind `json:"kind"`
	// ContentType is the media type, without parameters.
	ContentType string `json:"content_type,omitempty"`
	Title       string `json:"title,omitempty"`
	// Content is Markdown for HTML, the body itself for text kinds, empty
	// for binaries and redirects. It is cut to the Fetcher's budget.
	Content string `json:"content,omitempty"`
	// Size is the number of body bytes read; for a binary, the announced
	// Content-Length (-1 when unknown).
	Size int64 `json:"size"`
	// Truncated is set when the body exceeded web.max_bytes or the text
	// exceeded the budget; Content then ends with a note saying so.
	Truncated bool `json:"truncated,omitempty"`
	// RedirectTo is the absolute URL of a redirect to another host.
	RedirectTo string    `json:"redirect_to,omitempty"`
	FetchedAt  time.Time `json:"fetched_at"`
	// Cached is set when the page came from the cache.
	Cached bool `json:"-"`
}

// Fetcher fetches web pages for models: one GET, bounded in time, size
// and redirects, with every connection checked against the address policy,
// then converted to Markdown or text (in odin-fetch, see proc.go) and
// cached.
//
// A Fetcher is safe for concurrent use. Close releases its idle
// connections.
type Fetcher struct {
	timeout   time.Duration
	maxBytes  int64
	ttl       time.Duration
	research  config.ResearchTTL
	budget    int
	userAgent string
	cache     Cache
	now       func() time.Time
	policy    *policy
	transport *http.Transport
	proc      *proc
}

// Option configures a Fetcher or a Searcher.
type Option func(*options)

type options struct {
	cache    Cache
	now      func() time.Time
	resolver *net.Resolver
	version  string
	budget   int
	timeout  time.Duration
	launch   Launch
}

// WithCache sets the cache (default: a MemoryCache of 256 pages). Wire a
// StoreCache to keep pages across runs.
func WithCache(c Cache) Option { return func(o *options) { o.cache = c } }

// WithClock sets the clock used to stamp and expire cache entries.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithResolver sets the DNS resolver (tests use one that answers from a
// table).
func WithResolver(r *net.Resolver) Option { return func(o *options) { o.resolver = r } }

// WithVersion sets the Odin version sent in the User-Agent.
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithBudget sets the size in bytes of the text a fetch returns
// (default DefaultBudget).
func WithBudget(n int) Option { return func(o *options) { o.budget = n } }

// WithTimeout sets the time limit of one request (Fetcher: overrides
// web.timeout; Searcher: default 15s).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

func collect(opts []Option) options {
	o := options{version: "dev"}
	for _, fn := range opts {
		fn(&o)
	}
	if o.now == nil {
		o.now = time.Now
	}
	return o
}

// UserAgent is the User-Agent Odin sends.
func UserAgent(version string) string {
	if version == "" {
		version = "dev"
	}
	return "Odin/" + version + " (+https://github.com/odin-code/odin)"
}

// NewFetcher builds a Fetcher from the web section of the configuration
// (config.Default().Web holds the defaults). A zero Timeout or MaxBytes
// takes the default above; a zero CacheTTL turns cache hits off, as
// odin.yaml documents for cache_ttl: 0. It fails on a malformed
// allow_hosts entry.
func NewFetcher(cfg config.Web, opts ...Option) (*Fetcher, error) {
	o := collect(opts)
	f := &Fetcher{
		timeout:   cmpOr(o.timeout, cfg.Timeout, DefaultTimeout),
		maxBytes:  cmpOr(cfg.MaxBytes, DefaultMaxBytes),
		ttl:       cfg.CacheTTL,
		research:  cfg.ResearchTTL,
		budget:    cmpOr(o.budget, DefaultBudget),
		userAgent: UserAgent(o.version),
		cache:     o.cache,
		now:       o.now,
	}
	if f.cache == nil {
		f.cache = NewMemoryCache(0)
	}
	p, err := newPolicy(cfg.AllowHosts, o.resolver, f.timeout)
	if err != nil {
		return nil, err
	}
	f.policy = p.withDeny(cfg.DenyHosts)
	f.transport = newTransport(p, f.timeout)
	f.proc = newProc(FetchPath(), o.launch)
	return f, nil
}

// newTransport is an HTTP transport whose every connection passes the
// address policy. It ignores proxy settings on purpose: through a proxy
// the policy would check the proxy's address, not the target's.
func newTransport(p *policy, timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       60 * time.Second,
	}
}

func cmpOr[T comparable](vals ...T) T {
	var zero T
	for _, v := range vals {
		if v != zero {
			return v
		}
	}
	return zero
}

// Close stops the odin-fetch process and closes idle connections.
func (f *Fetcher) Close() {
	f.proc.close()
	f.transport.CloseIdleConnections()
}

// ResearchMaxAge is the cache lifetime the Research agent uses for rawURL:
// ResearchTTL of the URL's source kind.
func (f *Fetcher) ResearchMaxAge(rawURL string) time.Duration {
	kind, _ := ClassifySource(rawURL)
	return ResearchTTL(kind, f.research)
}

// Fetch fetches rawURL, serving it from the cache when a copy younger than
// web.cache_ttl exists.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	return f.FetchMaxAge(ctx, rawURL, f.ttl)
}

// FetchMaxAge is Fetch with an explicit cache lifetime; maxAge <= 0 skips
// the cache lookup. The result is stored either way, so that a caller with
// a longer lifetime (the Research agent) can reuse it.
//
// Errors wrap ErrInvalidURL, ErrBlockedAddress (as *BlockedError),
// ErrTimeout, ErrRedirectLoop, ErrTooManyRedirects, an *HTTPError, or the
// context's error when ctx ended. A binary body or a redirect to another
// host is not an error: it is a Page of that kind.
func (f *Fetcher) FetchMaxAge(ctx context.Context, rawURL string, maxAge time.Duration) (*Page, error) {
	u, err := f.normalize(rawURL)
	if err != nil {
		return nil, err
	}
	// Before the cache: a page fetched before its host was denied is
	// not served either.
	if rule := f.policy.denied(u.Hostname()); rule != "" {
		return nil, &DeniedHostError{Host: u.Hostname(), Rule: rule}
	}
	key := "webfetch:" + u.String()
	if maxAge > 0 {
		if p := f.lookup(ctx, key, maxAge); p != nil {
			return p, nil
		}
	}
	p, err := f.fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	// A cache that fails to store only costs a refetch later; the page
	// itself is good, so the error does not fail the call.
	if b, err := json.Marshal(p); err == nil {
		_ = f.cache.Put(ctx, key, b, p.FetchedAt)
	}
	return p, nil
}

// lookup returns the cached page for key if it is younger than maxAge. A
// failing or corrupt cache reads as a miss.
func (f *Fetcher) lookup(ctx context.Context, key string, maxAge time.Duration) *Page {
	b, at, ok, err := f.cache.Get(ctx, key)
	if err != nil || !ok || f.now().Sub(at) >= maxAge {
		return nil
	}
	var p Page
	if json.Unmarshal(b, &p) != nil || p.URL == "" {
		return nil
	}
	p.Cached = true
	return &p
}

// normalize validates rawURL and upgrades http to https for hosts that
// are not explicitly allowed.
func (f *Fetcher) normalize(rawURL string) (*url.URL, error) {
	s := strings.TrimSpace(rawURL)
	if len(s) > maxURLLength {
		return nil, fmt.Errorf("web: %w: longer than %d bytes", ErrInvalidURL, maxURLLength)
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("web: %w: %v", ErrInvalidURL, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("web: %w %q: only http and https URLs can be fetched", ErrInvalidURL, s)
	case u.Hostname() == "":
		return nil, fmt.Errorf("web: %w %q: no host", ErrInvalidURL, s)
	case u.User != nil:
		return nil, fmt.Errorf("web: %w %q: URLs with credentials are not fetched", ErrInvalidURL, s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("web: %w %q: bad port", ErrInvalidURL, s)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	u.Host = strings.ToLower(u.Host)
	if u.Scheme == "http" && !f.policy.allowedURL(u) {
		u.Scheme = "https"
		u.Host = strings.TrimSuffix(u.Host, ":80")
	}
	return u, nil
}

// Redirects is the redirect policy of one fetch, an http.Client's
// CheckRedirect: same-host redirects are followed (at most MaxRedirects,
// never in a loop); one to another host stops the fetch and is recorded in
// CrossHost, for the model to decide about.
type Redirects struct {
	CrossHost *url.URL
}

// Check is the http.Client CheckRedirect function.
func (r *Redirects) Check(req *http.Request, via []*http.Request) error {
	for _, v := range via {
		if sameURL(v.URL, req.URL) {
			chain := make([]string, 0, len(via)+1)
			for _, v := range via {
				chain = append(chain, v.URL.String())
			}
			chain = append(chain, req.URL.String())
			return fmt.Errorf("%w: %s", ErrRedirectLoop, strings.Join(chain, " -> "))
		}
	}
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d, last to %s", ErrTooManyRedirects, MaxRedirects, req.URL)
	}
	if !sameHost(via[0].URL, req.URL) {
		r.CrossHost = req.URL
		return http.ErrUseLastResponse
	}
	return nil
}

func sameURL(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && sameHost(a, b) && a.EscapedPath() == b.EscapedPath() && a.RawQuery == b.RawQuery
}

// sameHost compares hosts ignoring case, a leading "www." and default
// ports, so http→https and example.com→www.example.com are followed.
func sameHost(a, b *url.URL) bool {
	ha := strings.TrimPrefix(canonicalHost(a.Hostname()), "www.")
	hb := strings.TrimPrefix(canonicalHost(b.Hostname()), "www.")
	return ha == hb && effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	p := u.Port()
	if p == defaultPort(strings.ToLower(u.Scheme)) {
		return ""
	}
	return p
}

// fetch has odin-fetch fetch and convert u: it parses the page in its
// sandbox, and every request it makes comes back here to pass the address
// policy on f.transport.
func (f *Fetcher) fetch(parent context.Context, u *url.URL) (*Page, error) {
	ctx, cancel := context.WithTimeout(parent, f.timeout)
	defer cancel()
	page, err := f.proc.fetch(ctx, Msg{URL: u.String(), UserAgent: f.userAgent,
		MaxBytes: f.maxBytes, Budget: f.budget, TimeoutMS: f.timeout.Milliseconds()}, f.do)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) {
			return nil, fmt.Errorf("web: %w", he)
		}
		if errors.Is(err, errNoFetcher) {
			return nil, err
		}
		return nil, f.fetchError(parent, u, err)
	}
	page.FetchedAt = f.now()
	return page, nil
}

// forwarded are the request headers odin-fetch may set; the rest (cookies,
// authorization, hop-by-hop headers) are not its to choose.
var forwarded = []string{"User-Agent", "Accept", "Accept-Language"}

// do makes one request of odin-fetch's through the guarded transport: GET
// only, the body read up to the size cap (one byte over, so that odin-fetch
// tells a body that exactly fits from one that was cut) and not at all for
// a successful binary response, whose type and size are all it needs.
func (f *Fetcher) do(ctx context.Context, m Msg) Msg {
	var out Msg // helperproc routes it
	u, err := url.Parse(m.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || m.Method != http.MethodGet {
		out.Err = EncodeError(fmt.Errorf("%w: odin-fetch asked for %s %q", ErrInvalidURL, m.Method, m.URL))
		return out
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		out.Err = EncodeError(err)
		return out
	}
	for _, h := range forwarded {
		if v := m.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := f.transport.RoundTrip(req)
	if err != nil {
		out.Err = EncodeError(err)
		return out
	}
	defer resp.Body.Close()
	out.Status, out.Header = resp.StatusCode, resp.Header
	if kind, ok := Classify(MediaType(resp.Header.Get("Content-Type"))); ok && kind == KindBinary && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return out
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		out.Status, out.Header = 0, nil
		out.Err = EncodeError(err)
		return out
	}
	out.Body = body
	return out
}

// fetchError classifies a failed request; parent is the caller's context,
// whose end is reported as such rather than as a timeout.
func (f *Fetcher) fetchError(parent context.Context, u *url.URL, err error) error {
	var blocked *BlockedError
	switch {
	case errors.As(err, &blocked):
		return fmt.Errorf("web: fetch %s: %w", u, blocked)
	case errors.Is(err, ErrRedirectLoop), errors.Is(err, ErrTooManyRedirects):
		return fmt.Errorf("web: fetch %s: %w", u, unwrapURLError(err))
	case parent.Err() != nil:
		return fmt.Errorf("web: fetch %s: %w", u, context.Cause(parent))
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("web: fetch %s: %w after %s", u, ErrTimeout, f.timeout)
	}
	return fmt.Errorf("web: fetch %s: %w", u, unwrapURLError(err))
}

// unwrapURLError drops net/http's *url.Error wrapper, whose text repeats
// the method and URL the caller already names.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
