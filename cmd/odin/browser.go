package main

import "github.com/odin-code/odin/internal/browser"

// browsers is the process's WebBrowser pool: one odin-browser (and its
// Chromium) per agent run, started in the session's sandbox on the run's
// first browser call (like the other helper processes: read-only but for
// its private /tmp, where Chromium's profile lives; no network but a
// private loopback, the page's requests coming to Odin over the pipe; no
// secret in its environment), closed when the run ends (Deps.EndRun) and, for
// whatever is left, when the app closes. Nil when web.browser is
// malformed (the warning says why).
func (a *app) browsers() *browser.Pool {
	a.browsersOnce.Do(func() {
		p, err := browser.NewPool(a.cfg.Web, a.helperLaunch)
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
