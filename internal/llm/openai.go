package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Defaults of OpenAIOptions.
const (
	DefaultBaseURL       = "https://api.openai.com/v1"
	DefaultTimeout       = 5 * time.Minute
	DefaultIdleTimeout   = 90 * time.Second
	DefaultBudget        = 15 * time.Minute
	DefaultMaxRetries    = 4
	DefaultBackoffBase   = 500 * time.Millisecond
	DefaultBackoffMax    = 30 * time.Second
	DefaultMaxRetryAfter = 2 * time.Minute
	// DefaultIdleConnTimeout: long enough to carry a conversation's connection
	// from one model call to the next (a tool run, the user's reply),
	// short enough that a burst of sessions in odin serve does not leave
	// hundreds of sockets open after it.
	DefaultIdleConnTimeout = 30 * time.Second
)

// idleConnsPerProvider is how many idle connections a provider's pool
// keeps: the parallel calls of a large fan-out.
const idleConnsPerProvider = 256

const (
	maxTokensField      = "max_tokens"
	maxCompletionTokens = "max_completion_tokens"
)

// AgentHeader carries Request.Agent so that scripted servers and proxies
// can route by agent.
const AgentHeader = "X-Odin-Agent"

// OpenAIOptions configures NewOpenAI. Zero values mean the defaults above,
// except MaxRetries.
type OpenAIOptions struct {
	// BaseURL of the API, e.g. http://localhost:11434/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (local servers). The environment is never consulted.
	APIKey string
	// Timeout bounds one attempt, streaming included. Negative disables it.
	Timeout time.Duration
	// IdleTimeout bounds the silence of one attempt: from sending the
	// request to the first byte of the answer, and between two reads of
	// the stream. A stalled stream fails after it instead of after
	// Timeout. Negative disables it.
	IdleTimeout time.Duration
	// Budget bounds the whole call: every attempt and every wait between
	// them. When it runs out the call fails without another retry.
	// Negative disables it.
	Budget time.Duration
	// Provider names the provider in error messages, so that a timeout
	// names the config key that changes it (providers.<Provider>.timeout).
	Provider string
	// KeyEnv is the variable the key came from, named when the provider
	// refuses the key (401, 403).
	KeyEnv string
	// MaxRetries is how many times a retryable failure is retried after
	// the first attempt; 0 (or less) means never, so that a configured
	// max_retries: 0 is honoured. Pass DefaultMaxRetries for the default.
	MaxRetries int
	// BackoffBase and BackoffMax shape the exponential backoff: attempt n
	// waits a jittered BackoffBase*2^(n-1), at most BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRetryAfter is the longest Retry-After that is waited for; a server
	// asking for more ends the call with the error (and its RetryAfter).
	MaxRetryAfter time.Duration
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string
	// MaxTokensParam is the body field that carries Request.MaxTokens:
	// "max_tokens" (understood by every compatible server) or
	// "max_completion_tokens" (required by OpenAI's reasoning models).
	// Default: max_completion_tokens for api.openai.com, else max_tokens.
	MaxTokensParam string
	// HTTPClient performs the requests; nil uses the process's pool of
	// provider connections (see sharedPool).
	HTTPClient *http.Client
	// IdleConnTimeout is how long an idle connection to the provider stays open
	// for the next request (default DefaultIdleConnTimeout); it applies to the
	// pool used when HTTPClient is nil.
	IdleConnTimeout time.Duration
	// Sleep waits d or until ctx ends (returning ctx.Err()); tests inject
	// it to observe backoff without waiting. Nil uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read Retry-After dates. Nil uses time.Now.
	Now func() time.Time
	// Jitter returns a random duration in [0, d); nil uses math/rand.
	Jitter func(d time.Duration) time.Duration
	// Limiter is the provider's shared quota (see RateLimits): every
	// attempt waits for its turn, and a 429 pauses it for every caller.
	// Nil means no quota of Odin's own.
	Limiter *Limiter
}

// OpenAI is a Client for any OpenAI-compatible Chat Completions endpoint.
// It is safe for concurrent use.
type OpenAI struct {
	opts   OpenAIOptions
	client openai.Client
	// shownURL is the base URL as configured, for messages: opts.BaseURL
	// gains the trailing slash the SDK joins paths with, which the user
	// did not write.
	shownURL string
}

var _ Client = (*OpenAI)(nil)

// NewOpenAI returns a client configured by opts.
func NewOpenAI(opts OpenAIOptions) *OpenAI {
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	shown := opts.BaseURL
	if !strings.HasSuffix(opts.BaseURL, "/") {
		opts.BaseURL += "/"
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Budget == 0 {
		opts.Budget = DefaultBudget
	}
	if opts.Provider == "" {
		opts.Provider = "<name>"
	}
	opts.MaxRetries = max(opts.MaxRetries, 0)
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = DefaultBackoffBase
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.MaxTokensParam == "" {
		opts.MaxTokensParam = maxTokensField
		if u, err := url.Parse(opts.BaseURL); err == nil && u.Hostname() == "api.openai.com" {
			opts.MaxTokensParam = maxCompletionTokens
		}
	}
	if opts.IdleConnTimeout <= 0 {
		opts.IdleConnTimeout = DefaultIdleConnTimeout
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: sharedPool(opts.IdleConnTimeout)}
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = func(d time.Duration) time.Duration {
			if d <= 0 {
				return 0
			}
			return rand.N(d)
		}
	}
	// The client is assembled from explicit options only: openai.NewClient
	// would also read OPENAI_API_KEY and friends from the environment and
	// send them to whatever server BaseURL names.
	ro := []option.RequestOption{
		option.WithHTTPClient(opts.HTTPClient),
		option.WithBaseURL(opts.BaseURL),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(0), // retries are ours: events, Retry-After, cancel
	}
	for k, v := range opts.Headers {
		ro = append(ro, option.WithHeader(k, v))
	}
	return &OpenAI{opts: opts, client: openai.Client{Options: ro}, shownURL: shown}
}

// pools are the provider connection pools of the process, by idle
// timeout: every client without an HTTPClient of its own shares one. Odin
// serve builds a client per session, and a pool per client kept one idle
// connection per session open after a burst (and dialled anew for every
// new session); shared, the sessions of a provider reuse each other's
// connections. The pools are private to this package: idle connections
// of a provider are not shared with, or closed by, unrelated code.
var pools = struct {
	mu sync.Mutex
	m  map[time.Duration]*http.Transport
}{m: map[time.Duration]*http.Transport{}}

// sharedPool returns the pool whose idle connections close after
// idle.
func sharedPool(idle time.Duration) http.RoundTripper {
	pools.mu.Lock()
	defer pools.mu.Unlock()
	if t, ok := pools.m[idle]; ok {
		return inMemoryBody{t}
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	// Specialists call the same host in parallel; keeping their
	// connections (and TLS sessions) alive spares every fan-out a burst
	// of handshakes. Over HTTP/1.1 (local servers) each parallel call
	// holds its own connection, so the pool keeps as many as a fan-out
	// uses; the default transport's 100 in total would send most of a
	// 256-specialist fan-out back to dialling on every turn.
	t := base.Clone()
	t.MaxIdleConns = idleConnsPerProvider
	t.MaxIdleConnsPerHost = idleConnsPerProvider
	t.IdleConnTimeout = idle
	t.WriteBufferSize = writeBufferSize
	pools.m[idle] = t
	return inMemoryBody{t}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stream implements Client. Every failure is an *Error; retryable ones are
// retried up to MaxRetries times, each retry announced by an EventRetry.
func (c *OpenAI) Stream(ctx context.Context, req Request, onEvent func(Event)) (*Response, error) {
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	body, err := encodeRequest(req, c.opts.MaxTokensParam, &wires)
	if err != nil {
		return nil, &Error{Kind: KindBadRequest, Message: err.Error(), Attempts: 0}
	}
	// bctx carries the budget; ctx stays the caller's, so that running out
	// of budget is told apart from being cancelled.
	bctx, cancel := ctx, context.CancelFunc(func() {})
	if c.opts.Budget > 0 {
		bctx, cancel = context.WithTimeoutCause(ctx, c.opts.Budget, errBudget)
	}
	defer cancel()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, canceled(err, attempt-1)
		}
		if bctx.Err() != nil {
			return nil, c.budgetError(attempt-1, nil)
		}
		if err := c.rateWait(bctx, &req, onEvent); err != nil {
			if ctx.Err() == nil {
				return nil, c.budgetError(attempt-1, nil)
			}
			return nil, canceled(ctx.Err(), attempt-1)
		}
		began := time.Now()
		resp, err := c.attempt(bctx, &req, body, onEvent)
		observeAttempt(time.Since(began), resp, err)
		if err == nil {
			resp.Parts = Ledger(req, resp.Usage)
			return resp, nil
		}
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Kind: KindNetwork, Message: err.Error(), Err: err}
		}
		e.Attempts = attempt
		if ctx.Err() == nil && bctx.Err() != nil {
			return nil, c.budgetError(attempt, e)
		}
		wait := c.backoff(attempt)
		if e.RetryAfter > 0 {
			wait = min(e.RetryAfter, c.opts.MaxRetryAfter)
		}
		// Even a call that gives up holds the others off: the quota is
		// spent for every agent of the provider.
		c.ratePause(&req, e, wait)
		if e.Kind == KindCanceled || !e.Retryable() || attempt > c.opts.MaxRetries || e.RetryAfter > c.opts.MaxRetryAfter {
			return nil, c.nextStep(e)
		}
		onEvent(Event{Kind: EventRetry, Retry: &RetryInfo{Attempt: attempt, Wait: wait.Milliseconds(), Err: e}})
		if err := c.opts.Sleep(bctx, wait); err != nil {
			if ctx.Err() == nil && bctx.Err() != nil {
				return nil, c.budgetError(attempt, e)
			}
			return nil, canceled(ctx.Err(), attempt)
		}
	}
}

// Causes of an attempt's or a call's context ending, told apart from the
// caller's cancellation by context.Cause.
var (
	errIdle   = errors.New("llm: idle timeout")
	errBudget = errors.New("llm: budget exhausted")
)

// budgetError is the failure of a call whose budget ran out; last is the
// error of the last attempt, if any.
func (c *OpenAI) budgetError(attempts int, last *Error) *Error {
	msg := fmt.Sprintf("gave up after %s, the call's budget (providers.%s.budget)", c.opts.Budget, c.opts.Provider)
	if last != nil && last.Kind != KindCanceled && !errors.Is(last.Err, errBudget) {
		msg += "; last error: " + last.Error()
	}
	return &Error{Kind: KindBudget, Message: msg, Attempts: attempts, Err: errBudget}
}

// backoff is the jittered exponential wait after the given failed attempt:
// half of it fixed, half random, so that clients that failed together do
// not retry together.
func (c *OpenAI) backoff(attempt int) time.Duration {
	d := c.opts.BackoffBase
	for i := 1; i < attempt && d < c.opts.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.opts.BackoffMax)
	return d/2 + c.opts.Jitter(d/2+1)
}

func canceled(err error, attempts int) *Error {
	if err == nil {
		err = context.Canceled
	}
	return &Error{Kind: KindCanceled, Message: err.Error(), Attempts: attempts, Err: err}
}

// attempt makes one request and reads its whole stream.
func (c *OpenAI) attempt(ctx context.Context, req *Request, body []byte, onEvent func(Event)) (*Response, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if c.opts.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
	}
	defer cancel()
	// The idle timer cancels the attempt with errIdle when nothing arrives
	// for IdleTimeout: before the response headers or between two reads.
	actx, cancelIdle := context.WithCancelCause(actx)
	defer cancelIdle(nil)
	idle := newIdleTimer(c.opts.IdleTimeout, func() { cancelIdle(errIdle) })
	defer idle.stop()

	var ro []option.RequestOption
	if req.Agent != "" {
		ro = append(ro, option.WithHeader(AgentHeader, req.Agent))
	}
	var raw *http.Response
	err := c.client.Post(actx, "chat/completions", body, &raw, ro...)
	if err != nil {
		if raw != nil && raw.Body != nil {
			_ = raw.Body.Close()
		}
		return nil, c.requestError(ctx, actx, raw, err)
	}
	defer func() { _ = raw.Body.Close() }()
	raw.Body = idle.reader(raw.Body)

	acc := newAccumulator(onEvent, req.MaxToolArguments)
	mt, _, _ := mime.ParseMediaType(raw.Header.Get("Content-Type"))
	if mt == "application/json" {
		// The server ignored stream: true and sent one completion.
		body, err := io.ReadAll(raw.Body)
		if err != nil {
			return nil, c.readError(ctx, actx, err)
		}
		if err := acc.chunk(body); err != nil {
			return nil, err
		}
		if !acc.complete() {
			return nil, &Error{Kind: KindBadResponse, Message: "the completion has no finish_reason: " + snippet(body)}
		}
		return acc.response(req)
	}

	if mt == "text/html" {
		// A captive portal or a proxy's page, not a model.
		body, _ := io.ReadAll(io.LimitReader(raw.Body, 512))
		return nil, &Error{Kind: KindBadResponse, StatusCode: raw.StatusCode, Message: "the server answered with an HTML page, not an event stream: " + snippet(body)}
	}
	dec := newSSEReader(raw.Body)
	defer dec.release()
	for {
		typ, data, ok := dec.next()
		if !ok {
			break
		}
		// Decoded in place, and nothing keeps the data (the reader reuses
		// it): the chunk's strings are copied by the decoder.
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue
		}
		if string(data) == "[DONE]" {
			acc.done = true
			break
		}
		if typ == "error" {
			return nil, streamError(bytes.Clone(data))
		}
		if err := acc.chunk(data); err != nil {
			return nil, err
		}
	}
	if err := dec.err(); err != nil {
		return nil, c.readError(ctx, actx, err)
	}
	if err := actx.Err(); err != nil {
		return nil, c.readError(ctx, actx, err)
	}
	if !acc.complete() {
		return nil, &Error{Kind: KindNetwork, Message: "stream ended before the response finished", Err: io.ErrUnexpectedEOF}
	}
	if acc.done {
		drainAfterDone(raw.Body, cancelIdle)
	}
	return acc.response(req)
}

// After [DONE] a server still sends the end of its chunked body. Go's
// transport pools a connection only when its body was read to EOF before
// Close, so the rest is read here: otherwise every model call could dial
// (and handshake TLS) again. A server that keeps the stream open after
// [DONE] costs at most drainWait; then the attempt's context is canceled,
// which closes that one connection, and the response stands.
const (
	drainWait  = 200 * time.Millisecond
	drainLimit = 64 << 10
)

var errDrained = errors.New("the stream stayed open after [DONE]")

func drainAfterDone(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainWait, func() { cancel(errDrained) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, drainLimit)
}

// nextStep adds to a failure that will not go away by retrying the step
// that fixes it: the variable the refused key came from, the command that
// lists models, the URL nothing answered at.
func (c *OpenAI) nextStep(e *Error) *Error {
	prov := c.opts.Provider
	if prov == "" {
		prov = "openai"
	}
	switch {
	case e.Kind == KindAuth:
		key := "the provider's API key (providers." + prov + ".api_key_env names its variable)"
		if c.opts.KeyEnv != "" {
			key = "$" + c.opts.KeyEnv + " (providers." + prov + ".api_key_env)"
		} else if c.opts.APIKey == "" {
			key = "no key was sent: set providers." + prov + ".api_key_env to the variable that holds one"
		}
		e.Hint = "check " + key + ", or run `odin doctor`"
	case e.StatusCode == http.StatusNotFound && isModelNotFound(e.Message):
		e.Hint = "`odin models` lists the models Odin knows; choose one with --model or models.main"
	case e.StatusCode == http.StatusNotFound:
		e.Hint = fmt.Sprintf("check the base URL %s (providers.%s.base_url or OPENAI_BASE_URL; most servers' URLs end in /v1) and the model (`odin models`)", c.shownURL, prov)
	case e.Kind == KindNetwork && errors.Is(e.Err, syscall.ECONNREFUSED):
		e.Hint = fmt.Sprintf("nothing answers at %s: start the server, or set providers.%s.base_url (or OPENAI_BASE_URL) to where it listens", c.shownURL, prov)
	}
	return e
}

func isModelNotFound(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model_not_found") || strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist") || strings.Contains(m, "not exist"))
}

// requestError classifies a failure to get a 2xx response.
func (c *OpenAI) requestError(ctx, actx context.Context, raw *http.Response, err error) *Error {
	if ctx.Err() != nil {
		return canceled(ctx.Err(), 0)
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		e := &Error{
			Kind:       classifyStatus(ae.StatusCode, ae.Code, ae.Type, ae.Message),
			StatusCode: ae.StatusCode,
			Message:    ae.Message,
			Err:        err,
		}
		if e.Message == "" {
			e.Message = http.StatusText(ae.StatusCode)
		}
		if ae.Code != "" && !strings.Contains(e.Message, ae.Code) {
			e.Message = ae.Code + ": " + e.Message
		}
		if ae.Response != nil {
			e.RetryAfter = retryAfter(ae.Response.Header, c.opts.Now())
		}
		return e
	}
	if raw != nil && raw.StatusCode >= 400 {
		// The error body was not the usual JSON (a proxy's HTML page).
		return &Error{
			Kind:       classifyStatus(raw.StatusCode, "", "", ""),
			StatusCode: raw.StatusCode,
			Message:    http.StatusText(raw.StatusCode) + " (unreadable error body)",
			RetryAfter: retryAfter(raw.Header, c.opts.Now()),
			Err:        err,
		}
	}
	if actx.Err() != nil {
		return c.timeoutError(actx, "no response")
	}
	return &Error{Kind: KindNetwork, Message: err.Error(), Err: err}
}

// timeoutError says which limit ended the attempt and which key sets it.
func (c *OpenAI) timeoutError(actx context.Context, what string) *Error {
	switch cause := context.Cause(actx); {
	case errors.Is(cause, errIdle):
		return &Error{Kind: KindTimeout, Err: errIdle, Message: fmt.Sprintf(
			"%s: the provider sent nothing for %s (idle timeout, providers.%s.idle_timeout)", what, c.opts.IdleTimeout, c.opts.Provider)}
	case errors.Is(cause, errBudget):
		return &Error{Kind: KindBudget, Err: errBudget, Message: fmt.Sprintf(
			"%s: gave up after %s, the call's budget (providers.%s.budget)", what, c.opts.Budget, c.opts.Provider)}
	}
	return &Error{Kind: KindTimeout, Err: actx.Err(), Message: fmt.Sprintf(
		"%s within %s (request timeout, providers.%s.timeout)", what, c.opts.Timeout, c.opts.Provider)}
}

// readError classifies a failure while reading the stream.
func (c *OpenAI) readError(ctx, actx context.Context, err error) *Error {
	switch {
	case ctx.Err() != nil:
		return canceled(ctx.Err(), 0)
	case actx.Err() != nil:
		return c.timeoutError(actx, "response not finished")
	}
	return &Error{Kind: KindNetwork, Message: "stream ended before the response finished (" + err.Error() + ")", Err: err}
}

// idleTimer fires when no read returned data for d; a nil timer (d <= 0)
// never fires.
type idleTimer struct {
	d time.Duration
	t *time.Timer
}

func newIdleTimer(d time.Duration, fire func()) *idleTimer {
	if d <= 0 {
		return &idleTimer{}
	}
	return &idleTimer{d: d, t: time.AfterFunc(d, fire)}
}

func (t *idleTimer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// reader returns body with every read that returns data restarting the
// timer. SSE comments count: a keep-alive is a sign of life.
func (t *idleTimer) reader(body io.ReadCloser) io.ReadCloser {
	if t.t == nil {
		return body
	}
	return &idleReader{ReadCloser: body, t: t}
}

type idleReader struct {
	io.ReadCloser
	t *idleTimer
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.t.t.Reset(r.t.d)
	}
	return n, err
}
