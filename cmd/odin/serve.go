package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/present"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

type serveFlags struct {
	listen     string
	roots      []string
	tlsCert    string
	tlsKey     string
	proxyTLS   bool
	idle       time.Duration
	corsOrigin []string
	cluster    clusterFlags // --cluster and its options (cluster.go)
}

func newServeCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve many sessions over HTTP (JSON + Server-Sent Events)",
		Long: `Serve Odin's HTTP API: create sessions for project directories under the
--root directories, send messages, stream events, cancel, answer approvals.
The API is described by the OpenAPI document at /openapi.yaml.

Every request needs "Authorization: Bearer TOKEN"; the token is generated on
first start into <state dir>/serve/token (mode 0600). The server listens on
loopback unless --listen says otherwise; a non-loopback address needs
--tls-cert and --tls-key, or --tls-proxy when a proxy in front terminates
TLS. Idle sessions are passivated (stopped; their history is in the store)
and restored on their next message. SIGINT or SIGTERM cancels and saves
in-flight turns and ends every event stream with a "shutdown" event.

ODIN_SERVE_CPUPROFILE=FILE writes a CPU profile of the whole run to FILE
at shutdown (go tool pprof FILE), for profiling serve under load.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(g, f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7700", "address to listen on (host:port)")
	fl.StringArrayVar(&f.roots, "root", nil, "directory under which sessions may be created (repeatable; default: the project directory)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file (PEM)")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS key file (PEM)")
	fl.BoolVar(&f.proxyTLS, "tls-proxy", false, "a reverse proxy in front terminates TLS (allows a non-loopback --listen without --tls-cert)")
	fl.DurationVar(&f.idle, "idle", 10*time.Minute, "passivate a session idle for this long")
	fl.StringArrayVar(&f.corsOrigin, "cors-origin", nil, "allow browser calls from this origin (repeatable; none by default)")
	fl.StringVar(&g.store, "store", "", "session store: a SQLite file, sqlite:///abs/path or postgres://… (store.url)")
	f.cluster.register(fl, true)
	return cmd
}

func runServe(g *globalFlags, f *serveFlags, stdout, stderr io.Writer) error {
	gcFor(longLived)
	if file := os.Getenv("ODIN_SERVE_CPUPROFILE"); file != "" {
		stop, err := startCPUProfile(file)
		if err != nil {
			return err
		}
		defer stop()
	}
	if g.store != "" && !strings.Contains(g.store, "://") && !filepath.IsAbs(g.store) {
		abs, err := filepath.Abs(g.store)
		if err != nil {
			return usageError("--store %q: %v", g.store, err)
		}
		g.store = abs
	}
	a, err := loadApp(g)
	if err != nil {
		return err
	}
	defer a.Close()
	// Sessions open the store when they start; a store.url that cannot
	// name one stops the server now rather than failing every session.
	if u := a.cfg.Store.URL; u != "" {
		if _, _, err := store.ParseURL(u); err != nil {
			return usageError("store.url (set by %s): %v", a.src.Origin("store.url"), err)
		}
	}
	if err := a.checkProvider(); err != nil {
		return err
	}
	mode, err := messages.ParseMode(a.cfg.Mode)
	if err != nil {
		return usageError("--mode: %v", err)
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageError("--listen %q: %v", f.listen, err)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together")
	}
	if !isLoopback(host) && f.tlsCert == "" && !f.proxyTLS {
		return usageError("--listen %s is not a loopback address: give --tls-cert and --tls-key, or --tls-proxy if a proxy terminates TLS", f.listen)
	}
	roots, err := serveRoots(f.roots, a.root)
	if err != nil {
		return err
	}
	if a.stateDir == "" {
		return usageError("no state directory for the token: set XDG_STATE_HOME or HOME")
	}
	tokenFile := filepath.Join(a.stateDir, "serve", "token")
	token, err := serveToken(tokenFile)
	if err != nil {
		return err
	}
	opener := newSessionOpener(g)
	defer opener.Close() // after srv.Shutdown has closed every session
	var sessions serve.Opener = serveOpener{opener}
	if f.cluster.name != "" {
		f.cluster.idle = f.idle
		front, leave, err := startClusterFront(g, &f.cluster, serveOpener{opener}, stdout, stderr)
		if err != nil {
			return err
		}
		defer leave() // after srv.Shutdown: this node's grains close last
		sessions = front
	}
	srv, err := serve.New(serve.Options{
		Opener: sessions, Token: token, Roots: roots, Mode: mode,
		Idle: f.idle, CORSOrigins: f.corsOrigin,
		Log:    logging.Slog(a.log.With().Str("component", "serve").Logger()),
		Priced: a.modelPriced,
	})
	if err != nil {
		return err
	}
	if w, ok := sessions.(dropWatcher); ok {
		w.watchDrops(srv) // a cluster front rejoins when dropped (cluster.go)
	}
	// Turns a previous server left unfinished (killed, or stopped
	// mid-turn) run again before new work comes in.
	rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
	n, err := srv.ResumePending(rctx)
	rcancel()
	if err != nil {
		fmt.Fprintf(stderr, "odin serve: could not look for interrupted turns: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(stderr, "odin serve: resuming the interrupted turns of %s\n", present.Plural(n, "session"))
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		srv.Shutdown() // the resumed sessions, saved and stopped
		return &exitError{code: exitFailed, err: fmt.Errorf("listen %s: %w", f.listen, err)}
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	defer recordServeAddr(a.stateDir, scheme, ln.Addr())() // for odin attach (attach.go)
	fmt.Fprintf(stdout, "odin serve: listening on %s://%s (token in %s; roots %s)\n", scheme, ln.Addr(), tokenFile, strings.Join(roots, ", "))
	errc := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			errc <- hs.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	return runUntilSignal(srv, hs, errc, 30*time.Second, func() {
		fmt.Fprintln(stderr, "odin serve: shutting down: cancelling and saving in-flight turns")
	})
}

// dropWatcher is an Opener that rejoins its cluster when dropped, with
// the server's sessions reconnected (serve.Server.Reconnect).
type dropWatcher interface {
	watchDrops(srv *serve.Server)
}

// startCPUProfile profiles the process into file until the returned
// function is called.
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("ODIN_SERVE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("ODIN_SERVE_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// serveRoots resolves the --root directories (absolute, symlinks
// resolved); none means the project root.
func serveRoots(given []string, project string) ([]string, error) {
	roots := append([]string(nil), given...)
	if len(roots) == 0 {
		roots = []string{project}
	}
	for i, r := range roots {
		abs, err := filepath.Abs(r)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, usageError("--root %s: %v", r, err)
		}
		roots[i] = abs
	}
	return roots, nil
}

// runUntilSignal waits until the HTTP server fails (errc) or the process
// gets SIGINT or SIGTERM; then it closes srv's sessions (cancelling and
// saving in-flight turns, ending every event stream) and shuts hs down
// within grace. onSignal, when set, runs first on a signal.
func runUntilSignal(srv *serve.Server, hs *http.Server, errc <-chan error, grace time.Duration, onSignal func()) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case err := <-errc:
		srv.Shutdown()
		return &exitError{code: exitFailed, err: err}
	case <-sigs:
	}
	if onSignal != nil {
		onSignal()
	}
	srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveToken reads the token file, creating it (0600, 32 random bytes in
// hex) on first start. A token file others can read is refused.
func serveToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		fi, serr := os.Stat(path)
		if serr == nil && fi.Mode().Perm()&0o077 != 0 {
			return "", &exitError{code: exitUsage, err: fmt.Errorf("token file %s is readable by others (mode %v); chmod 600 it or delete it for a new one", path, fi.Mode().Perm())}
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", &exitError{code: exitUsage, err: fmt.Errorf("token file %s is empty; delete it for a new one", path)}
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	if _, err := fh.WriteString(tok + "\n"); err != nil {
		fh.Close()
		return "", err
	}
	return tok, fh.Close()
}

// serveOpener adapts sessionOpener to serve.Opener.
type serveOpener struct {
	o sessionOpener
}

func (s serveOpener) New(ctx context.Context, project string) (serve.Session, error) {
	return s.o.open(ctx, project, "", frontOptions{})
}

func (s serveOpener) Load(ctx context.Context, id, project string) (serve.Session, error) {
	return s.o.open(ctx, project, id, frontOptions{})
}

// Stored finds a top-level session in the store the server was started
// with (the default database, or store.path of the directory odin serve
// ran in); a specialist's transcript is not a session to open.
func (s serveOpener) Stored(ctx context.Context, id string) (string, error) {
	a, err := loadApp(s.o.g)
	if err != nil {
		return "", err
	}
	a.stores = s.o.stores
	defer a.Close()
	st, err := a.openStore(ctx)
	if err != nil {
		return "", err
	}
	sess, err := st.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && sess.ParentID != "") {
		return "", fmt.Errorf("%w: %s", serve.ErrNotFound, id)
	}
	if err != nil {
		return "", err
	}
	return sess.Project, nil
}

// PendingSessions lists the sessions of the server's store holding inputs
// accepted and not done (serve.PendingLister).
func (s serveOpener) PendingSessions(ctx context.Context) ([]string, error) {
	a, err := loadApp(s.o.g)
	if err != nil {
		return nil, err
	}
	a.stores = s.o.stores
	defer a.Close()
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	ix, ok := st.(store.Inputs)
	if !ok {
		return nil, nil
	}
	return ix.PendingSessions(ctx)
}

func (s serveOpener) app(project string) (*app, error) {
	g := *s.o.g
	g.dir = project
	return loadApp(&g)
}

func (s serveOpener) Export(ctx context.Context, id, project, format string, w io.Writer) error {
	a, err := s.app(project)
	if err != nil {
		return err
	}
	defer a.Close()
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	if format == "markdown" {
		return store.ExportMarkdown(ctx, st, w, id)
	}
	return store.ExportJSONL(ctx, st, w, id)
}

func (s serveOpener) Undo(ctx context.Context, project string) (string, error) {
	a, err := s.app(project)
	if err != nil {
		return "", err
	}
	defer a.Close()
	return a.undo(ctx, false)
}
