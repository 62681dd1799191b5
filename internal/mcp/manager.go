package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/tools/tool"
)

// ErrConfig marks a Launcher's error that retrying cannot fix (the
// configuration refuses the server): the server fails at once. Mark an
// error with Refused.
var ErrConfig = errors.New("refused by the configuration")

// Refused marks err as ErrConfig without changing its text.
func Refused(err error) error { return refused{err} }

type refused struct{ err error }

func (r refused) Error() string   { return r.err.Error() }
func (r refused) Unwrap() []error { return []error{r.err, ErrConfig} }

// Options configure a Manager.
type Options struct {
	// Servers are the configured servers by name (mcp.servers, after
	// trust); disabled ones are kept for listing but never started.
	Servers map[string]config.MCPServer
	// DenyTools are glob patterns of tool names (mcp__SERVER__TOOL) that
	// are never offered (mcp.deny_tools).
	DenyTools []string
	// Dir is the working directory of stdio servers (the project root).
	Dir string
	// LookupEnv reads Odin's environment for ${VAR} expansion, bearer
	// tokens and the variables a stdio server inherits; nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ServerLookup, when set, gives the environment one server's ${VAR}
	// expansion and bearer_token_env read from, in place of LookupEnv
	// (the app hides secrets from the servers a project declares);
	// returning nil means LookupEnv.
	ServerLookup func(server string) func(string) (string, bool)
	// Launch builds stdio servers' commands in the sandbox; nil refuses
	// every stdio server (ErrNoLauncher): none runs outside it.
	Launch Launcher
	// Transport, when set, replaces the transport built from a server's
	// config (tests connect in-memory servers with it).
	Transport func(name string, cfg config.MCPServer) (sdk.Transport, error)
	// LogDir holds each stdio server's stderr as NAME.log (rotated at 1
	// MiB to NAME.log.1); "" keeps only the in-memory tail.
	LogDir string
	// CacheDir holds each server's last tool list, so that a lazy server
	// advertises its tools without starting; "" disables the cache (every
	// server then starts with the session).
	CacheDir string
	// Report is told, once per server, that it failed to start or gave up
	// restarting; nil reports nothing.
	Report func(server string, err error)
	// Explain, when set, turns the paths a server's errors name (its
	// stderr when it fails to start, a failed call's text) into one
	// sentence saying which the sandbox hid or kept read-only and how to
	// widen it; "" when the sandbox is not the cause.
	Explain func(server string, problems []PathProblem) string
	// OutputCap bounds a call's output in bytes; default 30000.
	OutputCap int
	// BackoffMin and BackoffMax bound the wait before a restart; defaults
	// 500ms and 30s. MaxRestarts is how many failed starts in a row end
	// the supervision (default 5).
	BackoffMin, BackoffMax time.Duration
	MaxRestarts            int
	// ConnectTimeout bounds one connection attempt (start, handshake and
	// tool list); default 60s, since npx may install a package first.
	ConnectTimeout time.Duration
	// Roots are the directories offered to servers in roots/list (the
	// project root and the added directories), absolute paths; SetRoots
	// changes them.
	Roots []string
	// Elicit answers servers' requests for input from the user; nil
	// declines each, telling the user why.
	Elicit ElicitFunc
	// Sample answers servers' requests to use the model (sampling); nil
	// refuses each. The capability is advertised either way.
	Sample SampleFunc
	// LogLevel is Odin's log level (debug, info, warn, error): servers
	// that log are asked for that level (logging/setLevel), and what they
	// send goes to Log. Empty: info.
	LogLevel string
	// Version is Odin's version, sent in the handshake.
	Version string
	// Auth keeps the OAuth credentials of http servers (docs/mcp-auth.md);
	// its zero value turns OAuth off: a server that answers 401 then
	// fails like any other. A server with bearer_token_env or an
	// Authorization header never uses OAuth.
	Auth TokenStore
	// Login, when set, runs the browser flow when a server asks for
	// authorization (`odin mcp login`); nil: such a server is in
	// StateNeedsLogin until the user logs in, and contributes no tools.
	Login *LoginFlow
	// AuthClient makes OAuth discovery, registration and token requests;
	// nil: a client with a 30s timeout and the SDK's SSRF checks.
	AuthClient *http.Client
	// Log receives server lifecycle events.
	Log zerolog.Logger
}

// State is where a server is in its lifecycle.
type State string

// Server states.
const (
	StateIdle       State = "idle"       // not started (lazy, or not yet)
	StateConnecting State = "connecting" // starting, or restarting after a crash
	StateReady      State = "ready"
	StateFailed     State = "failed" // gave up: failed MaxRestarts times in a row
	// StateNeedsLogin: the server asked for OAuth authorization and no
	// usable token is stored; `odin mcp login NAME` gives it one.
	StateNeedsLogin State = "needs login"
	StateDisabled   State = "disabled"
	StateClosed     State = "closed"
)

// Status describes one server for `odin mcp list`.
type Status struct {
	Name      string
	Transport string
	State     State
	// Err is the last failure, if any.
	Err string
	// Tools are the tool names the server offers (mcp__SERVER__TOOL).
	Tools []string
	// Cached is set when Tools come from an earlier session's list.
	Cached bool
	// Restarts counts restarts after a crash.
	Restarts int
	// Stderr are the last lines a stdio server wrote to stderr, raw:
	// sanitise them (termsafe) before showing them. Log is the file
	// holding all of it ("" when Options.LogDir is unset).
	Stderr []string
	Log    string
}

// Manager supervises a session's MCP servers. Its methods are safe for
// concurrent use; Close stops every server and waits for them.
type Manager struct {
	opts    Options
	servers []*server // sorted by name
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	// rootsMu orders root changes with the clients dial creates, so that
	// no client misses a change made while it connects.
	rootsMu sync.Mutex
	roots   []*sdk.Root

	progress progress
}

// New builds a Manager; nothing starts until Start or a tool call.
func New(opts Options) *Manager {
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.Launch == nil {
		opts.Launch = noLaunch
	}
	if opts.OutputCap <= 0 {
		opts.OutputCap = 30000
	}
	if opts.BackoffMin <= 0 {
		opts.BackoffMin = 500 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.MaxRestarts <= 0 {
		opts.MaxRestarts = 5
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 60 * time.Second
	}
	m := &Manager{opts: opts, roots: rootsOf(opts.Roots)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	names := make([]string, 0, len(opts.Servers))
	for n := range opts.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := &server{m: m, name: n, cfg: opts.Servers[n], state: StateIdle, changed: make(chan struct{}), stderr: &stderrLog{}}
		if opts.LogDir != "" {
			s.stderr.path = filepath.Join(opts.LogDir, n+".log")
		}
		if s.cfg.Disabled {
			s.state = StateDisabled
		} else {
			s.loadCache()
		}
		m.servers = append(m.servers, s)
	}
	return m
}

// Start starts, in the background, every server that is eager or whose
// tools are not known yet (no cached list). It never blocks.
func (m *Manager) Start() {
	for _, s := range m.servers {
		s.mu.Lock()
		need := s.state == StateIdle && (s.cfg.Startup == "eager" || s.cached == nil)
		s.mu.Unlock()
		if need {
			s.start()
		}
	}
}

// StartAll starts every enabled server, lazy or not (odin mcp list).
func (m *Manager) StartAll() {
	for _, s := range m.servers {
		s.start()
	}
}

// WaitReady waits until no started server is still connecting for the
// first time, or until d passes or ctx ends: the short connect budget a
// session grants servers before its first model request. A server whose
// tool list is remembered, or which failed to start once (it keeps
// retrying in the background), is not waited for.
func (m *Manager) WaitReady(ctx context.Context, d time.Duration) {
	m.wait(ctx, d, func(s *server) bool { return s.tools == nil && s.cached == nil && !s.reported })
}

// WaitSettled waits until no server is connecting (each is ready, failed,
// idle or closed), or until d passes or ctx ends.
func (m *Manager) WaitSettled(ctx context.Context, d time.Duration) {
	m.wait(ctx, d, func(*server) bool { return true })
}

// wait waits while some connecting server satisfies pending (called with
// the server's lock held).
func (m *Manager) wait(ctx context.Context, d time.Duration, pending func(*server) bool) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for _, s := range m.servers {
		for {
			s.mu.Lock()
			waiting := s.state == StateConnecting && pending(s)
			ch := s.changed
			s.mu.Unlock()
			if !waiting {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}
}

// Tools returns the tools of every server as they stand: a ready server's
// live list, otherwise the list remembered from an earlier session (its
// first call starts the server). A failed or disabled server has none. It
// never blocks on a server.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	seen := map[string]bool{}
	for _, s := range m.servers {
		for _, t := range s.toolSnapshot() {
			if n := t.Info().Name; !seen[n] {
				seen[n] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// Status describes every server, sorted by name.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		s.mu.Lock()
		st := Status{Name: s.name, Transport: transportName(s.cfg), State: s.state, Restarts: s.restarts}
		if s.lastErr != nil {
			st.Err = s.lastErr.Error()
		}
		st.Stderr, st.Log = s.stderr.lines(statusStderrLines), s.stderr.path
		list := s.tools
		if list == nil {
			list, st.Cached = s.cached, s.cached != nil
		}
		for _, t := range list {
			st.Tools = append(st.Tools, ToolName(s.name, t.Name))
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Close stops every server and waits for their supervisors to finish.
func (m *Manager) Close() error {
	m.cancel()
	for _, s := range m.servers {
		s.mu.Lock()
		cs := s.cs
		s.mu.Unlock()
		if cs != nil {
			_ = cs.Close()
		}
	}
	m.wg.Wait()
	for _, s := range m.servers {
		s.stderr.close()
	}
	return nil
}

// statusStderrLines is how many stderr lines Status keeps per server.
const statusStderrLines = 10

// explainLines is how many of a failed server's last stderr lines are
// searched for the path it could not use (a Node stack trace puts the
// error a dozen lines above the end).
const explainLines = 30

// explain is Options.Explain over lines, "" without it.
func (s *server) explain(lines []string) string {
	if s.m.opts.Explain == nil {
		return ""
	}
	probs := PathProblems(lines)
	if len(probs) == 0 {
		return ""
	}
	return s.m.opts.Explain(s.name, probs)
}

// transportName is the effective transport of a server config.
func transportName(c config.MCPServer) string {
	switch {
	case c.Type == "streamable-http":
		return "http"
	case c.Type != "":
		return c.Type
	case c.Command != "":
		return "stdio"
	}
	return "http"
}

// server is one supervised MCP server.
type server struct {
	m    *Manager
	name string
	cfg  config.MCPServer

	mu       sync.Mutex
	state    State
	started  bool
	client   *sdk.Client // of the live or latest connection: roots go to it
	cs       *sdk.ClientSession
	tools    []*sdk.Tool // live list; nil until listed
	cached   []*sdk.Tool // remembered list; nil when none
	built    []tool.Tool // adapters for tools (or cached), rebuilt on change
	lastErr  error
	reported bool
	restarts int
	changed  chan struct{} // closed and replaced on every change
	stderr   *stderrLog    // the stdio process's stderr, across restarts
	auth     *oauthHandler // an http server's OAuth, across reconnections; nil when off
	// resources and prompts are the live session's, listed in the
	// background once it is ready and when the server says they changed.
	resources []Resource
	prompts   []Prompt
	listed    bool // the live session's lists are in (or failed)

	// tc is the live session's side channel for MCP tasks (tasks.go).
	tc *taskConn
	// active are the envs of the calls in flight, oldest first: a server's
	// request that arrives on its own (stdio and SSE before protocol
	// 2026-07-28 carry no link to the call) belongs to the newest.
	active []*tool.Env
}

// notify must be called with s.mu held.
func (s *server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *server) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.state == StateDisabled || s.m.ctx.Err() != nil {
		return
	}
	s.started = true
	s.state = StateConnecting
	s.notify()
	s.m.wg.Add(1)
	go s.supervise()
}

// supervise connects, waits for the connection to end, and restarts with
// exponential backoff until the manager closes or MaxRestarts starts in a
// row fail.
func (s *server) supervise() {
	defer s.m.wg.Done()
	ctx := s.m.ctx
	log := s.m.opts.Log.With().Str("mcp_server", s.name).Logger()
	failures := 0
	for {
		cs, list, err := s.connect(ctx)
		if ctx.Err() != nil {
			if cs != nil {
				_ = cs.Close()
			}
			s.setState(StateClosed, nil)
			return
		}
		if err != nil {
			lines := s.stderr.lines(explainLines)
			if hint := s.explain(lines); hint != "" {
				err = fmt.Errorf("%s (%w)", hint, err)
			} else if len(lines) > 0 {
				err = fmt.Errorf("%w (its stderr: %s)", err, lines[len(lines)-1])
			}
			if s.needsLogin(err) {
				// The transport's wrapping ("connect: calling initialize:
				// sending ...: rejected by transport") says nothing to a
				// user: the login error says what to run.
				var nl *needsLoginError
				if !errors.As(err, &nl) {
					nl = &needsLoginError{server: s.name}
				}
				err = nl
				log.Warn().Err(err).Msg("mcp server needs login")
				s.fail(err)
				s.loggedOut()
				return
			}
			var ae *authError
			if errors.As(err, &ae) {
				err = ae
			}
			failures++
			log.Warn().Err(err).Int("failures", failures).Msg("mcp server failed to start")
			s.fail(err)
			if failures >= s.m.opts.MaxRestarts || errors.Is(err, ErrConfig) {
				s.setState(StateFailed, err)
				return
			}
			if !sleep(ctx, s.backoff(failures)) {
				s.setState(StateClosed, nil)
				return
			}
			continue
		}
		up := time.Now()
		s.ready(cs, list)
		log.Info().Int("tools", len(list)).Msg("mcp server ready")
		werr := cs.Wait()
		if ctx.Err() != nil {
			s.setState(StateClosed, nil)
			return
		}
		if werr == nil {
			werr = errors.New("the server closed the connection")
		}
		log.Warn().Err(werr).Msg("mcp server stopped; restarting")
		s.mu.Lock()
		s.cs = nil
		s.state = StateConnecting
		s.lastErr = fmt.Errorf("stopped: %w", werr)
		s.restarts++
		s.notify()
		s.mu.Unlock()
		// A server that stayed up a while starts afresh; one that dies
		// right after starting backs off as if it had failed to start.
		if time.Since(up) > time.Minute {
			failures = 0
		}
		failures++
		if failures >= s.m.opts.MaxRestarts {
			s.fail(werr)
			s.setState(StateFailed, werr)
			return
		}
		if !sleep(ctx, s.backoff(failures)) {
			s.setState(StateClosed, nil)
			return
		}
	}
}

// needsLogin reports whether a failed connection is the server asking for
// a login no one can give here: retrying cannot help.
func (s *server) needsLogin(err error) bool {
	if errors.Is(err, ErrNeedsLogin) {
		return true
	}
	s.mu.Lock()
	h := s.auth
	s.mu.Unlock()
	return h != nil && h.needsLogin()
}

// loggedOut puts the server in StateNeedsLogin: its tools (and the
// remembered list, so that the next session asks it again rather than
// advertising tools it cannot call) are dropped.
func (s *server) loggedOut() {
	s.mu.Lock()
	s.state = StateNeedsLogin
	s.cs = nil
	s.tools, s.cached, s.built = nil, nil, nil
	s.notify()
	s.mu.Unlock()
	if f := s.cacheFile(); f != "" {
		_ = os.Remove(f)
	}
}

func (s *server) backoff(failures int) time.Duration {
	d := s.m.opts.BackoffMin << min(failures-1, 16)
	return min(d, s.m.opts.BackoffMax)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// fail records err and reports the server's first failure, once.
func (s *server) fail(err error) {
	s.mu.Lock()
	s.lastErr = err
	first := !s.reported
	s.reported = true
	s.notify()
	s.mu.Unlock()
	if first && s.m.opts.Report != nil {
		s.m.opts.Report(s.name, err)
	}
}

func (s *server) setState(st State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = st
	if err != nil {
		s.lastErr = err
	}
	if st == StateFailed || st == StateClosed {
		s.cs = nil
	}
	if st == StateFailed {
		s.tools, s.cached, s.built = nil, nil, nil
	}
	s.notify()
}

func (s *server) ready(cs *sdk.ClientSession, list []*sdk.Tool) {
	s.mu.Lock()
	s.cs = cs
	s.state = StateReady
	s.lastErr = nil
	s.resources, s.prompts, s.listed = nil, nil, false
	s.setToolsLocked(list)
	s.notify()
	s.mu.Unlock()
	s.saveCache(list)
	s.m.wg.Add(1)
	go func() {
		defer s.m.wg.Done()
		s.afterReady(cs)
	}()
}

// refreshCatalog re-lists cs's resources and prompts within the connect
// budget.
func (s *server) refreshCatalog(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	s.listCatalog(ctx, cs)
}

// afterReady sets the server's log level, then lists its catalogue.
func (s *server) afterReady(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	s.setLogLevel(ctx, cs)
	s.listCatalog(ctx, cs)
}

// setToolsLocked must be called with s.mu held.
func (s *server) setToolsLocked(list []*sdk.Tool) {
	s.tools = list
	s.built = s.adapters(list)
}

func (s *server) toolSnapshot() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.built)
}

// connect starts the server, completes the handshake and lists its tools
// within ConnectTimeout. The context given to the SDK lives as long as the
// session: the SSE transport's event stream is bound to it.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, []*sdk.Tool, error) {
	cctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(s.m.opts.ConnectTimeout, cancel)
	cs, list, err := s.dial(cctx)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("no answer within %s: %w", s.m.opts.ConnectTimeout, err)
	}
	if err != nil {
		cancel()
		return nil, nil, err
	}
	// The context ends with the session (or the Manager).
	go func() {
		_ = cs.Wait()
		cancel()
	}()
	return cs, list, nil
}

func (s *server) dial(cctx context.Context) (*sdk.ClientSession, []*sdk.Tool, error) {
	var t sdk.Transport
	var err error
	if s.m.opts.Transport != nil {
		t, err = s.m.opts.Transport(s.name, s.cfg)
	} else {
		t, err = s.transport(cctx)
	}
	if err != nil {
		return nil, nil, err
	}
	t, tt := wrapForTasks(t)
	client := sdk.NewClient(&sdk.Implementation{Name: "odin", Version: s.m.opts.Version}, &sdk.ClientOptions{
		// roots with listChanged (SetRoots notifies).
		// elicitation in both modes: a URL is shown for the user to open.
		Capabilities: &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}},
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			// The handler runs on the connection's reader: list elsewhere.
			go s.refresh(req.Session)
		},
		ResourceListChangedHandler: func(_ context.Context, req *sdk.ResourceListChangedRequest) {
			go s.refreshCatalog(req.Session)
		},
		PromptListChangedHandler: func(_ context.Context, req *sdk.PromptListChangedRequest) {
			go s.refreshCatalog(req.Session)
		},
		ProgressNotificationHandler: s.m.progress.handle,
		LoggingMessageHandler:       s.logMessage,
		ElicitationHandler:          s.elicit,
		CreateMessageHandler:        s.sample,
	})
	s.m.rootsMu.Lock()
	client.AddRoots(s.m.roots...)
	s.mu.Lock()
	s.client = client
	s.mu.Unlock()
	s.m.rootsMu.Unlock()
	cs, err := client.Connect(cctx, t, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	var tc *taskConn
	if tt != nil {
		tc = tt.conn
	} else if st, ok := t.(*sdk.StreamableClientTransport); ok {
		// Over HTTP the tools' taskSupport takes a list of Odin's own.
		tc = newHTTPTasks(s, st, cs)
		tc.relist(cctx)
	}
	s.mu.Lock()
	s.tc = tc
	s.mu.Unlock()
	list, err := listTools(cctx, cs)
	if err != nil {
		_ = cs.Close()
		return nil, nil, fmt.Errorf("list tools: %w", err)
	}
	return cs, list, nil
}

func listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	if cs.InitializeResult() != nil && cs.InitializeResult().Capabilities != nil && cs.InitializeResult().Capabilities.Tools == nil {
		return []*sdk.Tool{}, nil
	}
	list := []*sdk.Tool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, nil
}

// refresh re-lists the tools after notifications/tools/list_changed; the
// next Tools snapshot (the next model request) has them.
func (s *server) refresh(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.m.opts.ConnectTimeout)
	defer cancel()
	list, err := listTools(ctx, cs)
	if err != nil {
		if s.m.ctx.Err() == nil {
			s.m.opts.Log.Warn().Err(err).Str("mcp_server", s.name).Msg("mcp: re-list tools")
		}
		return
	}
	s.mu.Lock()
	tc := s.tc
	if s.cs == cs {
		s.setToolsLocked(list)
		s.notify()
	}
	s.mu.Unlock()
	if tc != nil && tc.Connection == nil {
		tc.relist(ctx) // HTTP: the SDK's list passed unseen
	}
	s.saveCache(list)
}

// transport builds the SDK transport from the server's config.
func (s *server) transport(ctx context.Context) (sdk.Transport, error) {
	look := s.m.opts.LookupEnv
	if s.m.opts.ServerLookup != nil {
		if l := s.m.opts.ServerLookup(s.name); l != nil {
			look = l
		}
	}
	c := s.cfg
	switch transportName(c) {
	case "stdio":
		argv := []string{Expand(c.Command, look)}
		for _, a := range c.Args {
			argv = append(argv, Expand(a, look))
		}
		cmd, release, err := s.m.opts.Launch(ctx, s.name, argv, ServerEnv(c, look), s.m.opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("launch %s: %w", argv[0], err)
		}
		if cmd.Stderr == nil {
			cmd.Stderr = s.stderr
			// A grandchild holding stderr open must not keep the wait
			// for a stopped server going forever.
			if cmd.WaitDelay == 0 {
				cmd.WaitDelay = 2 * time.Second
			}
		}
		return newCommandTransport(cmd, release), nil
	case "http", "sse":
		hdr := http.Header{}
		for k, v := range c.Headers {
			hdr.Set(k, Expand(v, look))
		}
		if c.BearerTokenEnv != "" {
			tok, ok := look(c.BearerTokenEnv)
			if !ok || tok == "" {
				return nil, fmt.Errorf("bearer_token_env %s is not set", c.BearerTokenEnv)
			}
			hdr.Set("Authorization", "Bearer "+tok)
		}
		hc := &http.Client{Transport: headerTransport{hdr: hdr, next: http.DefaultTransport}}
		u := Expand(c.URL, look)
		if transportName(c) == "sse" {
			if s.m.opts.Login != nil {
				return nil, Refused(errors.New("OAuth login needs a Streamable HTTP server (type http); this one is sse"))
			}
			return &sdk.SSEClientTransport{Endpoint: u, HTTPClient: hc}, nil
		}
		t := &sdk.StreamableClientTransport{Endpoint: u, HTTPClient: hc}
		if h := s.oauth(u, hdr, look); h != nil {
			t.OAuthHandler = h
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown transport %q", c.Type)
}

// oauth is the server's OAuth handler for endpoint u, made once; nil when
// OAuth is off or the config already authorizes the server.
func (s *server) oauth(u string, hdr http.Header, look func(string) (string, bool)) *oauthHandler {
	if (s.m.opts.Auth.Dir == "" && s.m.opts.Login == nil) || hdr.Get("Authorization") != "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auth != nil && s.auth.serverURL == u {
		return s.auth
	}
	hc := s.m.opts.AuthClient
	if hc == nil {
		hc = &http.Client{Timeout: authTimeout}
	}
	h := &oauthHandler{server: s.name, serverURL: u, cfg: s.cfg.OAuth, store: s.m.opts.Auth,
		client: hc, login: s.m.opts.Login, log: s.m.opts.Log}
	if h.cfg != nil {
		h.secret = Expand(h.cfg.ClientSecret, look)
	}
	s.auth = h
	return h
}

// headerTransport adds a server's headers to every request.
type headerTransport struct {
	hdr  http.Header
	next http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// session returns the server's live session, starting the server when it
// is idle and waiting until it is ready, has failed, or ctx ends.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.start()
	for {
		s.mu.Lock()
		st, cs, err, ch := s.state, s.cs, s.lastErr, s.changed
		s.mu.Unlock()
		switch st {
		case StateReady:
			return cs, nil
		case StateFailed:
			return nil, fmt.Errorf("it failed to start: %v", err)
		case StateNeedsLogin:
			return nil, fmt.Errorf("it %v", err)
		case StateDisabled, StateClosed:
			return nil, fmt.Errorf("it is %s", st)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("it is not running (last error: %v)", err)
			}
			return nil, errors.New("it did not start in time")
		}
	}
}

// cacheFile is where the server's tool list is remembered: keyed by the
// config, so a changed command or URL never reuses another's list.
func (s *server) cacheFile() string {
	if s.m.opts.CacheDir == "" {
		return ""
	}
	b, _ := json.Marshal(s.cfg)
	sum := sha256.Sum256(b)
	return filepath.Join(s.m.opts.CacheDir, s.name+"-"+hex.EncodeToString(sum[:8])+".json")
}

func (s *server) loadCache() {
	f := s.cacheFile()
	if f == "" {
		return
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return
	}
	var list []*sdk.Tool
	if json.Unmarshal(data, &list) != nil {
		return
	}
	s.cached = list
	s.built = s.adapters(list)
}

func (s *server) saveCache(list []*sdk.Tool) {
	f := s.cacheFile()
	if f == "" {
		return
	}
	data, err := json.Marshal(list)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return
	}
	tmp := f + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, f)
	}
}

// Starting lists the servers still connecting for the first time with no
// tool list known: those whose tools a session started without, after
// WaitReady gave up on them.
func (m *Manager) Starting() []string {
	var out []string
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateConnecting && s.tools == nil && s.cached == nil && !s.reported {
			out = append(out, s.name)
		}
		s.mu.Unlock()
	}
	return out
}

// AwaitReady waits until server is ready and returns how many tools it
// offers, or the error that ended its start (it failed, was closed, or
// ctx ended first).
func (m *Manager) AwaitReady(ctx context.Context, name string) (int, error) {
	s, err := m.server(name)
	if err != nil {
		return 0, err
	}
	for {
		s.mu.Lock()
		st, n, lastErr, ch := s.state, len(s.tools), s.lastErr, s.changed
		s.mu.Unlock()
		switch st {
		case StateReady:
			return n, nil
		case StateFailed, StateClosed, StateDisabled, StateNeedsLogin:
			if lastErr == nil {
				lastErr = fmt.Errorf("it is %s", st)
			}
			return 0, lastErr
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-m.ctx.Done():
			return 0, m.ctx.Err()
		}
	}
}

// ServerOf names the configured server a tool name (mcp__SERVER__TOOL)
// belongs to; the longest matching name wins, as server names may hold
// "_".
func (m *Manager) ServerOf(toolName string) (string, bool) {
	best := ""
	for _, s := range m.servers {
		if strings.HasPrefix(toolName, Prefix+s.name+"__") && len(s.name) > len(best) {
			best = s.name
		}
	}
	return best, best != ""
}

// Connect starts server if need be and waits until it is ready (its
// tools are then in Tools), has failed, or ctx ends.
func (m *Manager) Connect(ctx context.Context, name string) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	if _, err := s.session(ctx); err != nil {
		return fmt.Errorf("MCP server %s: %w", name, err)
	}
	return nil
}
