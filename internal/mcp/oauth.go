package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/odin-code/odin/config"
)

// ErrNeedsLogin marks a server that asked for authorization when no usable
// token is stored and nobody is there to log in (a headless run, or any
// session: the browser flow runs only in `odin mcp login NAME`). The
// error's text says which command fixes it.
var ErrNeedsLogin = errors.New("needs login")

type needsLoginError struct{ server, why string }

func (e *needsLoginError) Error() string {
	return fmt.Sprintf("needs login%s: run `odin mcp login %s`", e.why, e.server)
}

func (e *needsLoginError) Is(target error) bool { return target == ErrNeedsLogin }

// authError is a failed browser flow. The transport buries it under its
// own wrapping ("connect: calling initialize: sending initialize: rejected
// by transport"); the manager reports it alone, as the step that failed.
type authError struct{ err error }

func (e *authError) Error() string { return "authorization: " + e.err.Error() }
func (e *authError) Unwrap() error { return e.err }

// LoginFlow is the interactive part of an authorization: `odin mcp login`
// sets it on the Manager it connects with.
type LoginFlow struct {
	// Open shows the user the authorization URL: a browser opened on it,
	// or the URL printed for them to open. The flow then waits for the
	// authorization server to redirect to Odin's loopback listener.
	Open func(ctx context.Context, authURL string) error
}

// authTimeout bounds one discovery, registration or token request.
const authTimeout = 30 * time.Second

// oauthHandler is the auth.OAuthHandler of one HTTP server: it sends the
// stored token (refreshed when it expires, the refresh saved), and on a
// 401 or a 403 insufficient_scope either runs the browser flow (login) or
// reports that the server needs login. It lives as long as its server, so
// that a 401 forces at most one refresh. Safe for concurrent use.
type oauthHandler struct {
	server    string
	serverURL string
	cfg       *config.MCPOAuth // nil when the server's config has none
	secret    string           // cfg's client secret, expanded
	store     TokenStore
	client    *http.Client // discovery, registration, exchange and refresh
	login     *LoginFlow   // nil: headless
	log       zerolog.Logger

	mu        sync.Mutex
	ts        *savingSource
	loaded    bool
	forced    bool // a 401 already forced a refresh
	needLogin bool
	// stepUp is set while a 403 insufficient_scope is being answered: the
	// scopes the server challenged are then requested with the configured
	// ones.
	stepUp bool
}

// needsLogin reports whether the server asked for a login this handler
// could not give.
func (h *oauthHandler) needsLogin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needLogin
}

// TokenSource is the stored token's source (nil when there is none, so
// that the first request goes out bare and the server's 401 says where to
// authorize). A login starts from no token: it authorizes afresh.
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.loaded && h.login == nil {
		h.loaded = true
		c, err := h.store.Load(h.serverURL)
		if err != nil {
			return nil, err
		}
		if c != nil && c.Token != nil {
			h.ts = h.source(c)
		}
	}
	if h.ts == nil {
		return nil, nil
	}
	return h.ts, nil
}

// Authorize answers a 401 or 403 (see auth.OAuthHandler).
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	bearer := bearerChallenge(challenges)
	if resp.StatusCode == http.StatusForbidden && bearer["error"] != "insufficient_scope" {
		// A plain refusal: no authorization changes it. The transport
		// retries once and reports the 403.
		drain(resp)
		return nil
	}
	if h.login != nil {
		h.mu.Lock()
		h.stepUp = resp.StatusCode == http.StatusForbidden
		h.mu.Unlock()
		return h.browserFlow(ctx, req, resp, bearer["resource_metadata"])
	}
	drain(resp)
	if resp.StatusCode == http.StatusForbidden {
		scopes := strings.Fields(bearer["scope"])
		if err := h.recordStepUp(scopes); err != nil {
			h.log.Warn().Err(err).Str("mcp_server", h.server).Msg("mcp: remember the scopes a server asked for")
		}
		// The token still serves the rest: only this call needs more.
		why := " with more scope"
		if len(scopes) > 0 {
			why = " with more scope (" + strings.Join(scopes, " ") + ")"
		}
		return &needsLoginError{server: h.server, why: why}
	}
	if h.retryStored(ctx) {
		return nil
	}
	h.setNeedLogin()
	return &needsLoginError{server: h.server}
}

func (h *oauthHandler) setNeedLogin() {
	h.mu.Lock()
	h.needLogin = true
	h.mu.Unlock()
}

// retryStored adopts a token another process stored since (a login in
// another terminal), or forces one refresh of ours: a server may revoke an
// access token before its expiry. It reports whether the request is worth
// retrying.
func (h *oauthHandler) retryStored(ctx context.Context) bool {
	c, err := h.store.Load(h.serverURL)
	if err != nil || c == nil || c.Token == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ts == nil || h.ts.last() != c.Token.AccessToken {
		h.ts = h.source(c)
		return true
	}
	if h.forced || c.Token.RefreshToken == "" {
		return false
	}
	h.forced = true
	stale := *c.Token
	stale.Expiry = time.Now().Add(-time.Hour)
	c.Token = &stale
	ts := h.source(c)
	if _, err := ts.Token(); err != nil {
		h.log.Info().Err(err).Str("mcp_server", h.server).Msg("mcp: token refresh refused")
		return false
	}
	h.ts = ts
	return ctx.Err() == nil
}

// recordStepUp remembers scopes a server asked for, for the next login.
func (h *oauthHandler) recordStepUp(scopes []string) error {
	c, err := h.store.Load(h.serverURL)
	if err != nil || c == nil || len(scopes) == 0 {
		return err
	}
	c.StepUp = union(c.StepUp, scopes)
	return h.store.Save(c)
}

// source builds the saving token source of stored credentials; a refresh
// goes to their token endpoint with their resource.
func (h *oauthHandler) source(c *Credentials) *savingSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.refreshClient(c.Resource))
	s := &savingSource{h: h, creds: *c, base: c.oauthConfig().TokenSource(ctx, c.Token)}
	s.creds.Token = nil
	s.lastAccess = c.Token.AccessToken
	return s
}

// refreshClient is the client of token refreshes: RFC 8707 asks for the
// resource on every token request, and x/oauth2 sends only the grant.
func (h *oauthHandler) refreshClient(resource string) *http.Client {
	next := h.client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Timeout: h.client.Timeout, Transport: resourceTransport{resource: resource, next: next}}
}

// scopes picks the scopes to request from those discovered (the
// challenge's, else the metadata's scopes_supported): the configured
// ones when set (with the challenged ones on a step-up), plus those a
// server asked for since the last login.
func (h *oauthHandler) scopes(discovered []string) []string {
	out := discovered
	h.mu.Lock()
	stepUp := h.stepUp
	h.mu.Unlock()
	if h.cfg != nil && len(h.cfg.Scopes) > 0 {
		out = slices.Clone(h.cfg.Scopes)
		if stepUp {
			out = union(out, discovered)
		}
	}
	if c, err := h.store.Load(h.serverURL); err == nil && c != nil {
		if stepUp {
			// Each flow is a new SDK handler, which knows no earlier
			// grant: keep what the stored token was granted.
			out = union(c.Scopes, out)
		}
		out = union(out, c.StepUp)
	}
	return out
}

// browserFlow runs the authorization code flow with PKCE through the SDK:
// discovery (RFC 9728, RFC 8414 and OpenID fallbacks), the configured
// client or dynamic registration (RFC 7591) for a loopback redirect
// (RFC 8252) on a random port, the user's browser, and the exchange with
// the resource (RFC 8707). The token is saved before the request is
// retried.
func (h *oauthHandler) browserFlow(ctx context.Context, req *http.Request, resp *http.Response, metadataURL string) error {
	if metadataURL != "" {
		// The SDK quietly falls back to other metadata locations when the
		// named one is unusable, and then fails somewhere later with an
		// error about registration; the metadata's own problem is the one
		// the user can act on.
		if _, err := oauthex.GetProtectedResourceMetadata(ctx, metadataURL, req.URL.String(), h.client); err != nil {
			drain(resp)
			return &authError{fmt.Errorf("the server's protected-resource metadata is unusable: %w", err)}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		drain(resp)
		return &authError{fmt.Errorf("listen for the redirect: %w", err)}
	}
	redirect := "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/callback"
	results := make(chan callbackResult, 1)
	srv := &http.Server{Handler: callbackHandler(results), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()

	var resource string
	conf := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if u, err := url.Parse(args.URL); err == nil {
				resource = u.Query().Get("resource")
			}
			return h.fetchCode(ctx, args.URL, results)
		},
		RequestRefreshToken: true,
		Client:              h.client,
		ScopeFilter:         h.scopes,
		NewTokenSource: func(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			c := &Credentials{ServerURL: h.serverURL, Resource: resource, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
				AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
				Scopes: cfg.Scopes, Token: tok}
			if old, err := h.store.Load(h.serverURL); err == nil && old != nil {
				c.StepUp = without(old.StepUp, cfg.Scopes)
			}
			if err := h.store.Save(c); err != nil {
				return nil, err
			}
			ts := h.source(c)
			h.mu.Lock()
			h.ts = ts
			h.mu.Unlock()
			return ts, nil
		},
	}
	if h.cfg != nil && h.cfg.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.secret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.secret}
		}
		conf.PreregisteredClient = pre
	} else {
		conf.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect},
			ClientName:              "Odin",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}}
	}
	flow, err := auth.NewAuthorizationCodeHandler(conf)
	if err != nil {
		drain(resp)
		return &authError{err}
	}
	if err := flow.Authorize(ctx, req, resp); err != nil {
		return &authError{err}
	}
	return nil
}

// fetchCode shows the user authURL and waits for the redirect.
func (h *oauthHandler) fetchCode(ctx context.Context, authURL string, results <-chan callbackResult) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("the authorization server's authorization endpoint %q is not an http(s) URL", authURL)
	}
	if err := h.login.Open(ctx, authURL); err != nil {
		return nil, err
	}
	select {
	case r := <-results:
		if r.err != nil {
			return nil, r.err
		}
		return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer from the browser: %w", ctx.Err())
	}
}

type callbackResult struct {
	code, state, iss string
	err              error
}

// callbackHandler takes the first redirect to /callback and hands its
// code (or refusal) to results; the browser is told it may close the tab.
func callbackHandler(results chan<- callbackResult) http.Handler {
	var once sync.Once
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var res callbackResult
		msg := "Odin is authorized. You can close this tab."
		switch {
		case q.Get("error") != "":
			desc := q.Get("error")
			if d := q.Get("error_description"); d != "" {
				desc += ": " + d
			}
			res.err = fmt.Errorf("the authorization server refused: %s", desc)
			msg = "Authorization failed (" + desc + "). You can close this tab."
		case q.Get("code") == "":
			http.Error(w, "no authorization code in the redirect", http.StatusBadRequest)
			return
		default:
			res = callbackResult{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		}
		sent := false
		once.Do(func() { results <- res; sent = true })
		if !sent {
			msg = "This authorization was already answered. You can close this tab."
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Odin</title><p>%s</p>\n", html.EscapeString(msg))
	})
	return mux
}

// savingSource is a token source that saves each new token (a refresh)
// to the store, so that the next process starts from it.
type savingSource struct {
	h     *oauthHandler
	creds Credentials // without the token
	base  oauth2.TokenSource

	mu         sync.Mutex
	lastAccess string
}

func (s *savingSource) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAccess
}

// Token returns a valid token, refreshing (and saving) an expired one.
func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken != s.lastAccess {
		s.lastAccess = t.AccessToken
		c := s.creds
		c.Token = t
		if old, err := s.h.store.Load(c.ServerURL); err == nil && old != nil {
			c.StepUp = old.StepUp
		}
		if err := s.h.store.Save(&c); err != nil {
			s.h.log.Warn().Err(err).Str("mcp_server", s.h.server).Msg("mcp: save refreshed token")
		}
	}
	return t, nil
}

// resourceTransport adds the RFC 8707 resource to refresh_token grants.
type resourceTransport struct {
	resource string
	next     http.RoundTripper
}

func (t resourceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.resource == "" || r.Method != http.MethodPost || r.Body == nil ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.next.RoundTrip(r)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	if vals, err := url.ParseQuery(string(body)); err == nil && vals.Get("grant_type") == "refresh_token" && !vals.Has("resource") {
		vals.Set("resource", t.resource)
		body = []byte(vals.Encode())
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(r)
}

// bearerChallenge is the Bearer challenge's parameters (nil without one).
func bearerChallenge(cs []oauthex.Challenge) map[string]string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") {
			return c.Params
		}
	}
	return nil
}

// drain closes a response the handler does not pass on.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
}

// union is a followed by b's scopes not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// without is a minus b.
func without(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
