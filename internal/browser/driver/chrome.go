package driver

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	cdptarget "github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/web/htmlproc"
)

//go:embed snapshot.js
var snapshotJS string

// Defaults of a command.
const (
	defaultTimeout = 30 * time.Second
	viewWidth      = 1280
	viewHeight     = 800
)

// flags are Chromium's switches beyond headless and the profile: no
// sandbox of its own (it runs inside Odin's, which forbids the namespaces
// Chromium's would create), no GPU, nothing that phones home or updates,
// and iframes in the page's own process so that the Fetch interception of
// the page sees their requests too.
var flags = map[string]any{
	"headless":                               true,
	"no-sandbox":                             true,
	"disable-gpu":                            true,
	"disable-quic":                           true,
	"no-first-run":                           true,
	"no-default-browser-check":               true,
	"disable-background-networking":          true,
	"disable-component-update":               true,
	"disable-sync":                           true,
	"disable-extensions":                     true,
	"disable-default-apps":                   true,
	"disable-breakpad":                       true,
	"disable-dev-shm-usage":                  true,
	"disable-features":                       "site-per-process,IsolateOrigins,Translate,MediaRouter,OptimizationHints",
	"disable-site-isolation-trials":          true,
	"metrics-recording-only":                 true,
	"mute-audio":                             true,
	"hide-scrollbars":                        true,
	"password-store":                         "basic",
	"use-mock-keychain":                      true,
	"disable-client-side-phishing-detection": true,
}

// chrome is the running browser and its one tab.
type chrome struct {
	profile     string
	cancelAlloc context.CancelFunc
	cancelTab   context.CancelFunc
	tab         context.Context
}

// start launches Chromium with a fresh profile in the sandbox's private
// /tmp and routes its page's requests to Odin.
func (s *server) start(program string) (*chrome, error) {
	if program == "" {
		return nil, errors.New("no Chromium program given")
	}
	profile, err := os.MkdirTemp("", "odin-browser-profile-")
	if err != nil {
		return nil, fmt.Errorf("profile directory: %w", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(program),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(viewWidth, viewHeight),
		// Chromium writes caches and crash reports under $HOME:
		// the profile is the only place it may.
		chromedp.Env("HOME=" + profile),
	}
	for k, v := range flags {
		opts = append(opts, chromedp.Flag(k, v))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	c := &chrome{profile: profile, cancelAlloc: cancelAlloc, cancelTab: cancelTab, tab: tab}
	chromedp.ListenTarget(tab, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go s.intercept(tab, e)
		case *network.EventWebSocketCreated:
			// Odin makes plain HTTP requests only: a WebSocket's
			// handshake is failed where Chromium pauses it for Fetch
			// (intercept refuses ws:), blocked by SetBlockedURLs where it
			// does not, and the agent is told.
			s.refuse("WebSocket " + e.URL + ": refused (WebBrowser does not route WebSockets through Odin's address policy)")
		}
	})
	// The first Run starts the browser and ties it to the context it
	// gets: the tab's own, not one with the start-up deadline.
	if err := chromedp.Run(tab); err != nil {
		c.close()
		return nil, fmt.Errorf("start %s: %w", program, err)
	}
	ctx, cancel := context.WithTimeout(tab, defaultTimeout)
	defer cancel()
	err = chromedp.Run(ctx,
		fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}),
		network.SetBlockedURLs([]string{"ws://*", "wss://*"}),
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorDeny),
	)
	if err == nil {
		err = s.guardPopups(ctx, tab)
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("start %s: %w", program, err)
	}
	return c, nil
}

// popupJS runs first in every document of the tab: window.open and links
// or forms aimed at another window do not open one but tell the driver
// (the __odinPopup binding) where they were going. A second page would
// not be intercepted: its requests would not go through Odin.
const popupJS = `(() => {
  const tell = (u) => { try { window.__odinPopup(String(u)); } catch (e) {} };
  const other = (t) => t && !["_self", "_top", "_parent"].includes(t.toLowerCase()) &&
    !document.querySelector('iframe[name="' + CSS.escape(t) + '"]');
  window.open = function (u) { try { tell(new URL(u || "about:blank", location.href).href); } catch (e) { tell(u); } return null; };
  document.addEventListener("click", (e) => {
    const a = e.target && e.target.closest && e.target.closest("a[href][target], area[href][target]");
    if (a && other(a.target)) { e.preventDefault(); tell(a.href); }
  }, true);
  document.addEventListener("submit", (e) => {
    const f = e.target;
    if (f && other(f.target)) { e.preventDefault(); tell(f.action); }
  }, true);
})();`

// guardPopups keeps the tab's pages from opening others: popupJS in every
// document, and any page the tab opens all the same (a script that kept a
// reference to the real window.open in an iframe, a pop-up Chromium opens
// itself) is closed as soon as it appears. The pop-ups are refused with a
// notice naming their address, for the agent to navigate to instead.
func (s *server) guardPopups(ctx context.Context, tab context.Context) error {
	c := chromedp.FromContext(tab)
	own := c.Target.TargetID
	bexec := cdp.WithExecutor(tab, c.Browser)
	const notice = ": closed (WebBrowser keeps one page; navigate to the address instead)"
	chromedp.ListenTarget(tab, func(ev any) {
		if e, ok := ev.(*runtime.EventBindingCalled); ok && e.Name == "__odinPopup" {
			s.refuse("pop-up to " + e.Payload + notice)
		}
	})
	chromedp.ListenBrowser(tab, func(ev any) {
		e, ok := ev.(*cdptarget.EventTargetCreated)
		if !ok || e.TargetInfo == nil || e.TargetInfo.Type != "page" || e.TargetInfo.TargetID == own {
			return
		}
		id, where := e.TargetInfo.TargetID, e.TargetInfo.URL
		go func() {
			_ = cdptarget.CloseTarget(id).Do(bexec)
			if where == "" || where == "about:blank" {
				where = "a new window"
			}
			s.refuse("pop-up to " + where + notice)
		}()
	})
	return chromedp.Run(ctx, runtime.AddBinding("__odinPopup"), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(popupJS).Do(ctx)
		return err
	}))
}

func (c *chrome) close() {
	c.cancelTab()
	c.cancelAlloc()
	_ = os.RemoveAll(c.profile)
}

// intercept hands one paused request to Odin and answers Chromium with
// Odin's response, or fails the request with Odin's refusal.
func (s *server) intercept(tab context.Context, e *fetch.EventRequestPaused) {
	exec := cdp.WithExecutor(tab, chromedp.FromContext(tab).Target)
	failWith := func(reason network.ErrorReason) {
		_ = fetch.FailRequest(e.RequestID, reason).Do(exec)
	}
	u := e.Request.URL + e.Request.URLFragment
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
		failWith(network.ErrorReasonAccessDenied)
		return
	}
	m := browser.Msg{Method: e.Request.Method, URL: u, Header: http.Header{}}
	for k, v := range e.Request.Headers {
		m.Header.Set(k, fmt.Sprint(v))
	}
	for _, p := range e.Request.PostDataEntries {
		if b, err := base64.StdEncoding.DecodeString(p.Bytes); err == nil {
			m.Body = append(m.Body, b...)
		}
	}
	ctx, cancel := context.WithTimeout(tab, 2*defaultTimeout)
	defer cancel()
	r := s.fetch(ctx, m)
	if r.Err != "" || r.Status == 0 {
		failWith(network.ErrorReasonBlockedByClient)
		return
	}
	var hdr []*fetch.HeaderEntry
	for k, vs := range r.Header {
		for _, v := range vs {
			hdr = append(hdr, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	_ = fetch.FulfillRequest(e.RequestID, int64(r.Status)).WithResponseHeaders(hdr).
		WithBody(base64.StdEncoding.EncodeToString(r.Body)).Do(exec)
}

// run carries out one command, starting Chromium first if needed.
func (s *server) run(c *browser.Command) (*browser.Result, error) {
	var startMS int64
	if s.chrome == nil {
		t0 := time.Now()
		ch, err := s.start(c.Chromium)
		if err != nil {
			return nil, err
		}
		s.chrome, startMS = ch, time.Since(t0).Milliseconds()
	}
	timeout := time.Duration(c.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(s.chrome.tab, timeout)
	defer cancel()
	res, err := s.act(ctx, c)
	if err == nil {
		res.Refused = s.takeRefused()
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%s did not finish within %s", c.Action, timeout)
		}
		return nil, err
	}
	res.StartMS = startMS
	return res, nil
}

// target is the CSS selector of a command's element: its ref, else its
// selector.
func target(c *browser.Command) (string, error) {
	switch {
	case c.Ref > 0:
		return `[data-odin-ref="` + strconv.Itoa(c.Ref) + `"]`, nil
	case strings.TrimSpace(c.Selector) != "":
		return c.Selector, nil
	}
	return "", fmt.Errorf("%s needs an element: a ref from the page as read, or a CSS selector", c.Action)
}

// present fails fast when sel matches nothing: chromedp would wait for it
// until the timeout.
func present(ctx context.Context, sel string, c *browser.Command) error {
	var n int
	if err := chromedp.Evaluate(`document.querySelectorAll(`+jsString(sel)+`).length`, &n).Do(ctx); err != nil {
		return fmt.Errorf("selector %q: %w", sel, err)
	}
	if n == 0 {
		if c.Ref > 0 {
			return fmt.Errorf("no element has ref %d: the page changed since it was read; read it again", c.Ref)
		}
		return fmt.Errorf("no element matches %q", sel)
	}
	return nil
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (s *server) act(ctx context.Context, c *browser.Command) (*browser.Result, error) {
	switch c.Action {
	case browser.ActionNavigate:
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("navigate needs an http or https URL, not %q", c.URL)
		}
		if err := chromedp.Run(ctx, chromedp.Navigate(u.String())); err != nil {
			return nil, fmt.Errorf("navigate to %s: %w", u, err)
		}
		return s.read(ctx)
	case browser.ActionRead:
		return s.read(ctx)
	case browser.ActionClick:
		sel, err := target(c)
		if err != nil {
			return nil, err
		}
		if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error { return present(ctx, sel, c) }),
			chromedp.Click(sel, chromedp.ByQuery, chromedp.NodeVisible)); err != nil {
			return nil, fmt.Errorf("click %s: %w", sel, err)
		}
		settle(ctx)
		return s.read(ctx)
	case browser.ActionType:
		sel, err := target(c)
		if err != nil {
			return nil, err
		}
		if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error { return present(ctx, sel, c) }),
			chromedp.Clear(sel, chromedp.ByQuery), chromedp.SendKeys(sel, c.Text, chromedp.ByQuery)); err != nil {
			return nil, fmt.Errorf("type into %s: %w", sel, err)
		}
		settle(ctx)
		return s.read(ctx)
	case browser.ActionSelect:
		sel, err := target(c)
		if err != nil {
			return nil, err
		}
		js := `(() => { const e = document.querySelector(` + jsString(sel) + `);
  if (!e || e.tagName !== 'SELECT') return 'not a select element';
  const o = Array.from(e.options).find(o => o.value === ` + jsString(c.Text) + ` || o.text.trim() === ` + jsString(c.Text) + `);
  if (!o) return 'no option ' + ` + jsString(strconv.Quote(c.Text)) + `;
  e.value = o.value; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return ''; })()`
		var problem string
		if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error { return present(ctx, sel, c) }),
			chromedp.Evaluate(js, &problem)); err != nil {
			return nil, fmt.Errorf("select in %s: %w", sel, err)
		}
		if problem != "" {
			return nil, fmt.Errorf("select in %s: %s", sel, problem)
		}
		settle(ctx)
		return s.read(ctx)
	case browser.ActionWait:
		if strings.TrimSpace(c.Selector) == "" {
			return nil, errors.New("wait needs a CSS selector")
		}
		if err := chromedp.Run(ctx, chromedp.WaitVisible(c.Selector, chromedp.ByQuery)); err != nil {
			return nil, fmt.Errorf("wait for %s: %w", c.Selector, err)
		}
		return s.read(ctx)
	case browser.ActionEvaluate:
		return s.evaluate(ctx, c.Expression)
	case browser.ActionScreenshot:
		var png []byte
		if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err != nil {
			return nil, fmt.Errorf("screenshot: %w", err)
		}
		var loc struct{ URL, Title string }
		_ = chromedp.Run(ctx, chromedp.Evaluate(`({URL: location.href, Title: document.title})`, &loc))
		return &browser.Result{URL: loc.URL, Title: loc.Title, PNG: png, Width: viewWidth, Height: viewHeight}, nil
	}
	return nil, fmt.Errorf("unknown action %q", c.Action)
}

// settle lets what a click or key started finish: a navigation it caused
// loads, a handler's timers of the same task run.
func settle(ctx context.Context) {
	var state string
	for range 50 {
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.readyState`, &state)); err == nil && state == "complete" {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// read snapshots the page and converts it to Markdown.
func (s *server) read(ctx context.Context) (*browser.Result, error) {
	var snap struct {
		URL   string `json:"url"`
		Title string `json:"title"`
		HTML  string `json:"html"`
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(snapshotJS, &snap)); err != nil {
		return nil, fmt.Errorf("read the page: %w", err)
	}
	u, err := url.Parse(snap.URL)
	if err != nil {
		u = &url.URL{}
	}
	_, md, err := htmlproc.PageMarkdown(ctx, snap.HTML, u)
	if err != nil {
		return nil, err
	}
	return &browser.Result{URL: snap.URL, Title: snap.Title, Markdown: md}, nil
}

// evaluate runs expr with V8's side-effect check on: an expression that
// would change the page, its storage or the network throws instead.
func (s *server) evaluate(ctx context.Context, expr string) (*browser.Result, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("evaluate needs an expression")
	}
	var res *runtime.RemoteObject
	var exc *runtime.ExceptionDetails
	err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		res, exc, err = runtime.Evaluate(expr).WithThrowOnSideEffect(true).WithReturnByValue(true).
			WithTimeout(runtime.TimeDelta(5000)).Do(ctx)
		return err
	}))
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if exc != nil {
		msg := exc.Text
		if exc.Exception != nil && exc.Exception.Description != "" {
			msg = exc.Exception.Description
		}
		if strings.Contains(msg, "EvalError: Possible side-effect") {
			return nil, fmt.Errorf("evaluate runs read-only expressions only; this one would change the page (%s)", firstLine(msg))
		}
		return nil, fmt.Errorf("evaluate: %s", firstLine(msg))
	}
	out := "undefined"
	if res != nil && len(res.Value) > 0 {
		out = string(res.Value)
	} else if res != nil && res.Description != "" {
		out = res.Description
	}
	var loc string
	_ = chromedp.Run(ctx, chromedp.Location(&loc))
	return &browser.Result{URL: loc, Value: out}, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
