package web

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/odin-code/odin/internal/helperproc"
)

// Launch starts argv (odin-fetch) the way Odin confines its helper
// processes: in the session's sandbox, with no network, nothing writable
// and no secret in its environment. It returns the command, not started,
// and a release function to call once it has exited.
type Launch func(ctx context.Context, argv []string) (*exec.Cmd, func(), error)

// WithLaunch sets how odin-fetch is started (the CLI passes its session's
// sandbox); without it odin-fetch runs in a sandbox of its own
// (bubblewrap, else Landlock), or not at all (helperproc.Sandboxed).
func WithLaunch(l Launch) Option { return func(o *options) { o.launch = l } }

// FetchPath finds odin-fetch: $ODIN_FETCH, else beside the running
// executable, else on PATH; "" when there is none.
func FetchPath() string {
	if p := os.Getenv("ODIN_FETCH"); p != "" {
		return p
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "odin-fetch")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath("odin-fetch"); err == nil {
		return p
	}
	return ""
}

// errNoFetcher is a fetch without an odin-fetch binary to parse the page.
var errNoFetcher = errors.New("web: odin-fetch, the process that fetches and converts pages, was not found beside odin, on PATH or in $ODIN_FETCH; install it beside odin: go install github.com/odin-code/odin/cmd/odin-fetch@latest (make build puts it in bin/)")

// proc is the odin-fetch process, started on the first fetch and again
// after it exits; its fetches are multiplexed over one pipe by ID
// (helperproc).
type proc struct {
	c *helperproc.Client[Msg]
}

func newProc(path string, launch Launch) *proc {
	return &proc{c: helperproc.New(helperproc.Config[Msg]{Name: "odin-fetch", Prefix: "web", Path: path,
		NotFound: errNoFetcher, Launch: helperproc.Launch(launch)})}
}

// fetch sends m to odin-fetch and serves its requests with do until the
// result comes, ctx ends (odin-fetch is told to stop the fetch), or the
// process dies.
func (p *proc) fetch(ctx context.Context, m Msg, do func(context.Context, Msg) Msg) (*Page, error) {
	r, err := p.c.Call(ctx, m, do)
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err.Err()
	}
	if r.Page == nil {
		return nil, errors.New("web: odin-fetch answered without a page")
	}
	return r.Page, nil
}

// close stops the process and waits for it.
func (p *proc) close() { p.c.Close() }
