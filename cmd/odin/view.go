package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/odin-code/odin/internal/logging"
	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/messages"
)

type viewFlags struct {
	listen    string
	roots     []string
	noBrowser bool
}

func newViewCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	f := &viewFlags{}
	cmd := &cobra.Command{
		Use:   "view [SESSION]",
		Short: "Open the web viewer: sessions, agent timelines, gates, transcripts and cost",
		Long: `Serve Odin's HTTP API on a loopback port and open the web viewer in the
browser (xdg-open or open; otherwise the URL is printed). The page reads
the API only: the sessions of the projects under --root (default: the
project directory), each run's timeline with one lane per agent, gate
stages and fix rounds, transcripts with diffs, cost, and — for sessions
running in this server — live events and pending approvals.

The bearer token goes in the URL's fragment (after #), which browsers never
send to a server; it is not logged. odin serve serves the same page at /.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			session := ""
			if len(args) == 1 {
				session = args[0]
			}
			return runView(g, f, session, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:0", "loopback address to listen on (host:port; port 0 picks a free one)")
	fl.StringArrayVar(&f.roots, "root", nil, "directory whose sessions may be shown and created (repeatable; default: the project directory)")
	fl.BoolVar(&f.noBrowser, "no-browser", false, "print the URL instead of opening a browser")
	return cmd
}

func runView(g *globalFlags, f *viewFlags, session string, stdout, stderr io.Writer) error {
	a, err := loadApp(g)
	if err != nil {
		return err
	}
	defer a.Close()
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageError("--listen %q: %v", f.listen, err)
	}
	if !isLoopback(host) {
		return usageError("--listen %s: odin view listens on loopback only; use odin serve (with TLS) to serve the viewer elsewhere", f.listen)
	}
	mode, err := messages.ParseMode(a.cfg.Mode)
	if err != nil {
		return usageError("--mode: %v", err)
	}
	roots, err := serveRoots(f.roots, a.root)
	if err != nil {
		return err
	}
	if a.stateDir == "" {
		return usageError("no state directory for the token: set XDG_STATE_HOME or HOME")
	}
	token, err := serveToken(filepath.Join(a.stateDir, "serve", "token"))
	if err != nil {
		return err
	}
	opener := newSessionOpener(g)
	defer opener.Close() // after srv.Shutdown has closed every session
	srv, err := serve.New(serve.Options{
		Opener: serveOpener{opener}, Token: token, Roots: roots, Mode: mode,
		Log:    logging.Slog(a.log.With().Str("component", "view").Logger()),
		Priced: a.modelPriced,
	})
	if err != nil {
		return err
	}
	if session != "" {
		// The viewer takes the full ID; the ID's unique prefix (what the
		// banner and odin sessions show) is resolved here, as everywhere.
		st, err := a.openStore(context.Background())
		if err != nil {
			return err
		}
		if session, err = resolveSession(context.Background(), st, session); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("listen %s: %w", f.listen, err)}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	base := "http://" + ln.Addr().String() + "/"
	frag := url.Values{"token": {token}}
	if session != "" {
		frag.Set("session", session)
	}
	full := base + "#" + frag.Encode()
	opened := false
	if !f.noBrowser {
		var cleanup func()
		opened, cleanup = openBrowser(full)
		defer cleanup()
	}
	if opened {
		fmt.Fprintf(stdout, "odin view: opened %s in your browser (Ctrl-C to stop)\n", base)
	} else {
		fmt.Fprintf(stdout, "odin view: open this URL (it carries the token after #; keep it private):\n%s\n", full)
	}

	return runUntilSignal(srv, hs, errc, 10*time.Second, nil)
}

// openBrowser starts the desktop's URL opener, if there is one, and
// reports whether it started. The URL carries the token, and a command
// line is visible to every local user (ps), so the opener is handed a
// private file (0600, in a 0700 directory, removed by cleanup) that
// forwards the browser to the URL; the URL goes to no log.
func openBrowser(u string) (opened bool, cleanup func()) {
	cleanup = func() {}
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	} else if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return false, cleanup // no desktop (ssh, a container): xdg-open would start and show nothing
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return false, cleanup
	}
	dir, err := os.MkdirTemp("", "odin-view-")
	if err != nil {
		return false, cleanup
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	page := filepath.Join(dir, "open.html")
	body := `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<meta http-equiv="refresh" content="0;url=` + html.EscapeString(u) + `"><title>Odin viewer</title>` +
		`<p>Opening the <a href="` + html.EscapeString(u) + `">Odin viewer</a>…</p>`
	if err := os.WriteFile(page, []byte(body), 0o600); err != nil {
		return false, cleanup
	}
	cmd := exec.Command(path, page)
	if err := cmd.Start(); err != nil {
		return false, cleanup
	}
	go func() { _ = cmd.Wait() }()
	return true, cleanup
}

// History runs fn with the store the server's sessions are written to, for
// the viewer's /v1/history endpoints.
func (s serveOpener) History(ctx context.Context, fn func(store.Store) error) error {
	a, err := s.app(s.o.g.dir)
	if err != nil {
		return err
	}
	defer a.Close()
	a.stores = s.o.stores
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	return fn(st)
}
