//go:build cluster

package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/odin-code/odin/actors"
	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/cluster"
	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/metrics"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/store"
)

// clusterBuilt tells tests which build this is.
const clusterBuilt = true

func runWorker(g *globalFlags, f *clusterFlags, stdout, stderr io.Writer) error {
	gcFor(longLived)
	// As serve's: a profile of the worker under a benchmark's load.
	if file := os.Getenv("ODIN_WORKER_CPUPROFILE"); file != "" {
		stop, err := startCPUProfile(file)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		defer stop()
	}
	node, _, closeNode, err := startClusterNode(g, f, true)
	if err != nil {
		return err
	}
	if f.metrics != "" {
		stopMetrics, addr, err := serveNodeMetrics(f.metrics)
		if err != nil {
			closeNode()
			return &exitError{code: exitFailed, err: err}
		}
		defer stopMetrics()
		fmt.Fprintf(stdout, "odin worker: metrics on http://%s/metrics\n", addr)
	}
	fmt.Fprintf(stdout, "odin worker: member %s of cluster %s at %s\n", node.ID(), f.name, node.Address())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	for {
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "odin worker: leaving the cluster: closing its sessions")
			closeNode()
			return nil
		case <-node.Dropped():
		}
		// The cluster dropped this live worker and will not take it back
		// under its member ID: it leaves (its sessions close; the ones
		// another member claimed meanwhile are fenced) and joins again
		// as a new member, which new placements reach.
		old := node.ID()
		fmt.Fprintf(stderr, "odin worker: member %s was dropped by the cluster (its heartbeats came later than --cluster-ttl %s): rejoining under a new member ID\n", old, f.ttl)
		closeNode()
		if node, _, closeNode, err = startClusterNode(g, f, true); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "odin worker: member %s of cluster %s at %s (rejoined; was %s)\n", node.ID(), f.name, node.Address(), old)
	}
}

// serveNodeMetrics serves a worker's GET /metrics: the process-wide
// instruments (the cluster's, the store's, the model client's) and the
// process's goroutines, as odin serve's /metrics writes them.
func serveNodeMetrics(addr string) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		metrics.WriteAll(&b)
		metrics.Header(&b, "go_goroutines", "gauge", "Goroutines that currently exist.")
		metrics.Sample(&b, "go_goroutines", float64(runtime.NumGoroutine()))
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(b.Bytes())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, ln.Addr().String(), nil
}

// startClusterNode opens the cluster's store and joins the cluster,
// hosting sessions when host is set. closeNode leaves the cluster, then
// closes the sessions' actor system and the store.
func startClusterNode(g *globalFlags, f *clusterFlags, host bool) (_ *cluster.Node, _ store.Store, closeNode func(), err error) {
	if g.store != "" && !strings.Contains(g.store, "://") && !filepath.IsAbs(g.store) {
		abs, err := filepath.Abs(g.store)
		if err != nil {
			return nil, nil, nil, usageError("--store %q: %v", g.store, err)
		}
		g.store = abs
	}
	a, err := loadApp(g)
	if err != nil {
		return nil, nil, nil, err
	}
	target := a.cfg.Store.URL
	if target == "" {
		target = a.dbPath()
	}
	// The app stays open while the node runs: its log is the node's.
	log := a.log.With().Str("component", "cluster").Logger()
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if target == "" {
		return nil, nil, nil, usageError("no store for the cluster: give --store, or set XDG_STATE_HOME or HOME")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.OpenURL(ctx, target)
	if err != nil {
		return nil, nil, nil, &exitError{code: exitFailed, err: fmt.Errorf("cluster store %s: %w", store.RedactURL(target), err)}
	}
	members, ok := st.(store.Membership)
	if f.membership == "kubernetes" {
		if members, err = kubernetesMembership(f.k8sNamespace); err != nil {
			st.Close()
			return nil, nil, nil, &exitError{code: exitFailed, err: err}
		}
	} else if !ok {
		st.Close()
		return nil, nil, nil, fmt.Errorf("cluster store %s keeps no members table", store.RedactURL(target))
	}
	opener := newSessionOpener(g)
	cfg := cluster.Config{
		Name: f.name, Store: members, Bind: cmp.Or(f.bind, f.advertise), Advertise: f.advertise, Port: f.port,
		TTL: f.ttl, ActivationTimeout: f.activationTimeout, Idle: f.idle,
		Log: logging.Slog(log),
	}
	if f.tlsCert != "" {
		cfg.TLS = &cluster.TLSFiles{Cert: f.tlsCert, Key: f.tlsKey, CA: f.tlsCA}
	}
	var ch *clusterHost
	if host {
		claimer, ok := st.(store.Claimer)
		if !ok {
			st.Close()
			return nil, nil, nil, fmt.Errorf("cluster store %s cannot claim sessions", store.RedactURL(target))
		}
		ch = &clusterHost{g: g, opener: opener, st: st, claim: claimer, configs: config.NewCache()}
		cfg.Host = ch
		// A node that hosts sessions hosts their remote specialists too,
		// in trees under its state directory.
		if a.stateDir != "" {
			cfg.Specialists, cfg.WorkDir = &specialistDeps{g: g}, filepath.Join(a.stateDir, "remote-specialists")
		}
	}
	node, err := cluster.Start(cfg)
	if err != nil {
		st.Close()
		return nil, nil, nil, &exitError{code: exitFailed, err: err}
	}
	if ch != nil {
		ch.node.Store(node)
	}
	return node, st, func() {
		node.Stop()
		opener.Close()
		st.Close()
		a.Close()
	}, nil
}

// clusterHost opens the sessions of this node's grains: the session's
// project is its stored one, every write goes through a claim on the
// cluster's store.
type clusterHost struct {
	g      *globalFlags
	opener sessionOpener
	st     store.Store
	claim  store.Claimer
	// configs keeps the projects' configuration between activations.
	configs *config.Cache
	// node places the sessions' remote specialists; set once the node
	// is up, before any grain opens a session.
	node atomic.Pointer[cluster.Node]
}

// Open implements cluster.Host.
func (h *clusterHost) Open(ctx context.Context, id, node string) (*cluster.Hosted, error) {
	s, err := h.st.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.ParentID != "" {
		return nil, fmt.Errorf("session %s is a specialist's transcript, not a session to host", id)
	}
	g := *h.g
	g.dir = s.Project
	g.configs = h.configs
	a, err := loadApp(&g)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	if err := a.checkProvider(); err != nil {
		return nil, err
	}
	// Claim before reading the history: from here a node that claimed
	// earlier writes nothing more, so what startSession reads is final.
	claim, err := h.claim.Claim(ctx, id, node)
	if err != nil {
		return nil, err
	}
	fw := &fenceWatch{Store: claim, claim: claim, fenced: make(chan struct{})}
	a.st = fw
	// Every log line of the session says where it runs and at which
	// claim, so that a fleet's logs can be read side by side.
	a.log = a.log.With().Str("session", id).Str("node", node).Int64("epoch", claim.Epoch()).Logger()
	a.actors = h.opener.actors
	if n := h.node.Load(); n != nil {
		a.remote = n.SpecialistPlacement()
	}
	live, err := a.startSession(ctx, sessionOptions{Interactive: true, Resume: id, Stored: &s, Mode: a.cfg.Mode})
	if err != nil {
		return nil, err
	}
	ok = true
	a.log.Info().Str("previous", claim.Previous()).Msg("cluster: session claimed and opened")
	return &cluster.Hosted{Session: &frontSession{a: a, live: live}, Epoch: claim.Epoch(), Fenced: fw.fenced, Previous: claim.Previous()}, nil
}

// fenceWatch is a claim's store that notices the first write refused
// with store.ErrFenced, so the grain stops instead of running on a
// session another node owns.
type fenceWatch struct {
	store.Store
	claim  *store.Fenced // for Batch, which is not part of store.Store
	once   sync.Once
	fenced chan struct{}
}

func (w *fenceWatch) check(err error) error {
	if errors.Is(err, store.ErrFenced) {
		w.once.Do(func() { close(w.fenced) })
	}
	return err
}

func (w *fenceWatch) Batch(ctx context.Context, fn func(ctx context.Context) error) error {
	return w.check(w.claim.Batch(ctx, fn))
}

func (w *fenceWatch) AppendMessage(ctx context.Context, m store.Message) (store.Message, error) {
	out, err := w.Store.AppendMessage(ctx, m)
	return out, w.check(err)
}

func (w *fenceWatch) UpdateMessage(ctx context.Context, m store.Message) error {
	return w.check(w.Store.UpdateMessage(ctx, m))
}

func (w *fenceWatch) AppendSummary(ctx context.Context, m store.Message) (store.Message, error) {
	out, err := w.Store.AppendSummary(ctx, m)
	return out, w.check(err)
}

func (w *fenceWatch) Messages(ctx context.Context, sessionID string) ([]store.Message, error) {
	out, err := w.Store.Messages(ctx, sessionID)
	return out, w.check(err)
}

func (w *fenceWatch) RecordTool(ctx context.Context, r store.ToolRecord) error {
	return w.check(w.Store.RecordTool(ctx, r))
}

func (w *fenceWatch) AddUsage(ctx context.Context, u store.UsageRecord) error {
	return w.check(w.Store.AddUsage(ctx, u))
}

func (w *fenceWatch) SetTodos(ctx context.Context, sessionID string, todos []store.Todo) error {
	return w.check(w.Store.SetTodos(ctx, sessionID, todos))
}

func (w *fenceWatch) UpdateSession(ctx context.Context, id string, u store.SessionUpdate) error {
	return w.check(w.Store.UpdateSession(ctx, id, u))
}

// The input ledger (store.Inputs), through the claim: a grain's inputs
// are accepted, finished and recovered at its epoch.

func (w *fenceWatch) AcceptInput(ctx context.Context, in store.Input) (store.Input, bool, error) {
	out, dup, err := w.claim.AcceptInput(ctx, in)
	return out, dup, w.check(err)
}

func (w *fenceWatch) Input(ctx context.Context, sessionID, id string) (store.Input, error) {
	out, err := w.claim.Input(ctx, sessionID, id)
	return out, w.check(err)
}

func (w *fenceWatch) PendingInputs(ctx context.Context, sessionID string) ([]store.Input, error) {
	out, err := w.claim.PendingInputs(ctx, sessionID)
	return out, w.check(err)
}

func (w *fenceWatch) PendingSessions(ctx context.Context) ([]string, error) {
	out, err := w.claim.PendingSessions(ctx)
	return out, w.check(err)
}

func (w *fenceWatch) FinishInput(ctx context.Context, inputID string, m store.Message) (store.Message, error) {
	out, err := w.claim.FinishInput(ctx, inputID, m)
	return out, w.check(err)
}

func (w *fenceWatch) MarkInputDone(ctx context.Context, sessionID, id string) error {
	return w.check(w.claim.MarkInputDone(ctx, sessionID, id))
}

func (w *fenceWatch) MarkInterrupted(ctx context.Context, messageID string) error {
	return w.check(w.claim.MarkInterrupted(ctx, messageID))
}

func (w *fenceWatch) PutAgentRun(ctx context.Context, r store.AgentRunRecord) error {
	return w.check(w.Store.PutAgentRun(ctx, r))
}

// clusterFront is serve's Opener on a cluster: a new session is created
// in the cluster's store and activated on the node that owns it; the
// server drives it through a RemoteSession.
type clusterFront struct {
	serveOpener
	m *frontMember
}

// frontMember is the front's current membership: its node and the
// cluster's store that node opened, both replaced when the front rejoins
// the cluster after being dropped (see watchDrops). Calls hold mu's read
// lock while they use them; the rejoin holds the write lock.
type frontMember struct {
	g      *globalFlags
	f      *clusterFlags
	stdout io.Writer
	stderr io.Writer

	mu        sync.RWMutex
	node      *cluster.Node
	st        store.Store
	closeNode func()
	left      bool
	// done is closed when the front leaves: no rejoin after that.
	done chan struct{}
}

// use returns the current node and store, held until release. While a
// rejoin holds them it waits, up to 10 s (a rejoin that keeps failing
// to reach the store takes longer), then returns serve.ErrUnavailable.
func (m *frontMember) use(ctx context.Context) (node *cluster.Node, st store.Store, release func(), err error) {
	deadline := time.Now().Add(10 * time.Second)
	for !m.mu.TryRLock() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, nil, nil, serve.ErrUnavailable
		}
		time.Sleep(20 * time.Millisecond)
	}
	return m.node, m.st, m.mu.RUnlock, nil
}

// leave leaves the cluster for good (serve's shutdown).
func (m *frontMember) leave() {
	close(m.done)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.left && m.closeNode != nil {
		m.closeNode()
	}
	m.left = true
}

func (c clusterFront) New(ctx context.Context, project string) (serve.Session, error) {
	g := *c.o.g
	g.dir = project
	a, err := loadApp(&g)
	if err != nil {
		return nil, err
	}
	node, st, release, err := c.m.use(ctx)
	if err != nil {
		a.Close()
		return nil, err
	}
	defer release()
	s, err := st.CreateSession(ctx, store.Session{ID: newID(), Project: a.root, Agent: store.AgentOrchestrator, Mode: a.cfg.Mode, Model: a.currentModel("main")})
	a.Close()
	if err != nil {
		return nil, err
	}
	return node.Attach(ctx, s.ID)
}

func (c clusterFront) Load(ctx context.Context, id, project string) (serve.Session, error) {
	node, _, release, err := c.m.use(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return node.Attach(ctx, id)
}

// Reopen implements serve.Reopener: after a rejoin the session's events
// go on from the last one the old member's subscriber published.
func (c clusterFront) Reopen(ctx context.Context, old serve.Session, id, project string) (serve.Session, error) {
	node, _, release, err := c.m.use(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if rs, ok := old.(*cluster.RemoteSession); ok {
		epoch, seq := rs.Position()
		return node.AttachAfter(ctx, id, epoch, seq)
	}
	return node.Attach(ctx, id)
}

func (c clusterFront) Stored(ctx context.Context, id string) (string, error) {
	_, st, release, err := c.m.use(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	s, err := st.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.ParentID != "") {
		return "", fmt.Errorf("%w: %s", serve.ErrNotFound, id)
	}
	if err != nil {
		return "", err
	}
	return s.Project, nil
}

func (c clusterFront) Export(ctx context.Context, id, project, format string, w io.Writer) error {
	_, st, release, err := c.m.use(ctx)
	if err != nil {
		return err
	}
	defer release()
	if format == "markdown" {
		return store.ExportMarkdown(ctx, st, w, id)
	}
	return store.ExportJSONL(ctx, st, w, id)
}

func (c clusterFront) Undo(ctx context.Context, project string) (string, error) {
	g := *c.o.g
	g.dir = project
	a, err := loadApp(&g)
	if err != nil {
		return "", err
	}
	defer a.Close()
	_, st, release, err := c.m.use(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	a.st = st // the cluster's store, not the project's default
	return a.undo(ctx, false)
}

// watchDrops rejoins the cluster, as odin worker does, each time the
// cluster drops this live front (its heartbeats came later than the
// TTL: protoactor never takes a member ID back). The HTTP server keeps
// running: srv detaches its sessions, the old member leaves (the
// sessions this front hosted close; the ones another member claimed
// meanwhile are fenced), a new member joins, and srv reopens the
// sessions through it, their event streams going on where they were.
func (c clusterFront) watchDrops(srv *serve.Server) {
	m := c.m
	go func() {
		for {
			m.mu.RLock()
			node := m.node
			m.mu.RUnlock()
			select {
			case <-m.done:
				return
			case <-node.Dropped():
			}
			old := node.ID()
			fmt.Fprintf(m.stderr, "odin serve: member %s was dropped by the cluster (its heartbeats came later than --cluster-ttl %s): rejoining under a new member ID\n", old, m.f.ttl)
			err := srv.Reconnect(m.rejoin)
			if err != nil {
				fmt.Fprintf(m.stderr, "odin serve: could not rejoin the cluster: %v\n", err)
				return
			}
			m.mu.RLock()
			node = m.node
			m.mu.RUnlock()
			fmt.Fprintf(m.stdout, "odin serve: member %s of cluster %s at %s (rejoined; was %s)\n", node.ID(), m.f.name, node.Address(), old)
		}
	}()
}

// rejoin leaves the cluster and joins it again as a new member, trying
// every second until it is in or the front leaves.
func (m *frontMember) rejoin() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.left {
		return errors.New("the front left the cluster")
	}
	m.closeNode()
	for {
		node, st, closeNode, err := startClusterNode(m.g, m.f, m.f.hostSessions)
		if err == nil {
			m.node, m.st, m.closeNode = node, st, closeNode
			return nil
		}
		fmt.Fprintf(m.stderr, "odin serve: rejoining the cluster: %v (trying again in 1s)\n", err)
		select {
		case <-m.done:
			m.left = true
			return err
		case <-time.After(time.Second):
		}
	}
}

// startClusterFront joins the cluster for odin serve --cluster and
// returns the opener the server uses, and what leaves the cluster.
func startClusterFront(g *globalFlags, f *clusterFlags, local serveOpener, stdout, stderr io.Writer) (serve.Opener, func(), error) {
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	node, st, closeNode, err := startClusterNode(g, f, f.hostSessions)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "odin serve: member %s of cluster %s at %s (hosting sessions: %t)\n", node.ID(), f.name, node.Address(), f.hostSessions)
	m := &frontMember{g: g, f: f, stdout: stdout, stderr: stderr, node: node, st: st, closeNode: closeNode, done: make(chan struct{})}
	return clusterFront{serveOpener: local, m: m}, m.leave, nil
}

// specialistDeps builds the deps of a remote specialist's task on this
// node: the project loaded from the task's tree, as a session of it would
// be (so its sandbox binds the tree), without MCP servers or a store: the
// task's transcript stays with its owner. A writer (isolation: worktree)
// gets a worktree of the tree, which its commands and write tools may
// write and nothing else: no additional directory (the node's
// --add-dir or permissions.additional_dirs) is granted to a task that
// came from another node, and its build cache is the task's scratch
// directory, which goes with the task.
type specialistDeps struct{ g *globalFlags }

// Deps implements cluster.SpecialistDeps.
func (s *specialistDeps) Deps(ctx context.Context, root, scratch string) (*actors.Deps, func(), error) {
	g := *s.g
	g.dir = root
	g.addDirs = nil
	a, err := loadApp(&g)
	if err != nil {
		return nil, nil, err
	}
	a.cfg.Permissions.AdditionalDirs = nil
	a.taskScratch = scratch
	if err := a.checkProvider(); err != nil {
		a.Close()
		return nil, nil, err
	}
	deps, err := a.buildDeps(events.New("remote", nil), a.headlessApprover())
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	deps.MCP, deps.Store = nil, nil
	return deps, a.Close, nil
}
