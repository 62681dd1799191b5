package main

import (
	"context"
	"os/exec"

	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/sandbox"
)

// browsers is the process's WebBrowser pool: one odin-browser (and its
// Chromium) per agent run, started on the run's first browser call and
// closed when the run ends (Deps.EndRun) and, for whatever is left, when
// the app closes. Nil when web.browser is malformed (the warning says
// why).
func (a *app) browsers() *browser.Pool {
	a.browsersOnce.Do(func() {
		p, err := browser.NewPool(a.cfg.Web, a.browserLaunch)
		if err != nil {
			a.log.Warn().Err(err).Msg("web browser disabled")
			a.warn(err.Error())
			return
		}
		a.browserPool = p
		a.closers = append(a.closers, closerFunc(p.Close))
	})
	return a.browserPool
}

// browserLaunch starts odin-browser in the session's sandbox like the
// other helper processes (helperLaunch): read-only but for its private
// /tmp, where Chromium's profile lives; no network but a private loopback,
// the page's requests coming to Odin over the pipe; no secret in its
// environment; gone with Odin. Unlike them it may create unix sockets,
// which Chromium needs to start: none of the host's is bound in.
func (a *app) browserLaunch(ctx context.Context, argv []string) (*exec.Cmd, func(), error) {
	return helperproc.Sandboxed(a.sandbox(), sandbox.Spec{Dir: a.root, UnixSockets: true})(ctx, argv)
}
