package browser_test

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
	"github.com/odin-code/odin/internal/browser/browsertest"
)

// pagesServer serves testdata on loopback and counts its requests.
func pagesServer(t *testing.T) (*httptest.Server, *atomic.Int64, int) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.FileServer(http.Dir("testdata")).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	return srv, &hits, port
}

func newPool(t *testing.T, cfg config.Web) *browser.Pool {
	t.Helper()
	if browsertest.Chromium() == "" {
		t.Skip(browsertest.SkipReason)
	}
	p, err := browser.NewPool(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestDriveAPage: navigate, fill, select, click, and the page's changed
// text is read back; the hidden paragraph is not; a screenshot is a PNG;
// an expression that would change the page is refused and changes
// nothing; a loopback server not allowed sees no request.
func TestDriveAPage(t *testing.T) {
	srv, hits, port := pagesServer(t)
	other, otherHits, _ := pagesServer(t)
	p := newPool(t, config.Web{Browser: config.Browser{LoopbackPorts: []int{port}}})
	ctx := t.Context()
	do := func(c browser.Command) *browser.Result {
		t.Helper()
		t0 := time.Now()
		r, err := p.Do(ctx, "run1", c)
		t.Logf("%s took %s", c.Action, time.Since(t0))
		if err != nil {
			t.Fatalf("%s: %v", c.Action, err)
		}
		return r
	}
	r := do(browser.Command{Action: browser.ActionNavigate, URL: srv.URL + "/page.html"})
	t.Logf("start-up %d ms; page:\n%s", r.StartMS, r.Markdown)
	if r.Title != "Counter" || !strings.Contains(r.Markdown, "Status: waiting") || strings.Contains(r.Markdown, "Hidden text") {
		t.Fatalf("navigate read %q:\n%s", r.Title, r.Markdown)
	}
	for _, want := range []string{`[button "Press me" ref=1]`, `[input type=text name="name" placeholder="Your name" ref=2]`, `ref=3]`, `[ref=4]`} {
		if !strings.Contains(r.Markdown, want) {
			t.Errorf("the page lacks %s:\n%s", want, r.Markdown)
		}
	}
	do(browser.Command{Action: browser.ActionType, Ref: 2, Text: "Ada"})
	do(browser.Command{Action: browser.ActionSelect, Selector: "#size", Text: "Large"})
	r = do(browser.Command{Action: browser.ActionClick, Ref: 1})
	if !strings.Contains(r.Markdown, "Status: clicked Ada l") {
		t.Fatalf("after the click:\n%s", r.Markdown)
	}
	if _, err := p.Do(ctx, "run1", browser.Command{Action: browser.ActionEvaluate, Expression: `document.title = "pwned"`}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a writing expression: %v", err)
	}
	r = do(browser.Command{Action: browser.ActionEvaluate, Expression: `document.title + " " + document.querySelectorAll("p").length`})
	if r.Value != `"Counter 2"` {
		t.Errorf("evaluate = %q, want the unchanged title", r.Value)
	}
	r = do(browser.Command{Action: browser.ActionScreenshot})
	if !bytes.HasPrefix(r.PNG, []byte("\x89PNG")) {
		t.Errorf("the screenshot is not a PNG: %q", r.PNG[:min(8, len(r.PNG))])
	}

	// Another loopback port: refused by Odin, never reached.
	before := otherHits.Load()
	_, err := p.Do(ctx, "run1", browser.Command{Action: browser.ActionNavigate, URL: other.URL + "/page.html"})
	if err == nil {
		t.Errorf("navigating to a loopback port not allowed succeeded")
	}
	t.Logf("refused: %v", err)
	if n := otherHits.Load(); n != before {
		t.Errorf("the server not allowed saw %d requests", n-before)
	}
	do(browser.Command{Action: browser.ActionNavigate, URL: srv.URL + "/page.html"})
	r = do(browser.Command{Action: browser.ActionClick, Selector: `a[href="/other.html"]`})
	if r.Title != "Other" || !strings.Contains(r.Markdown, "The other page.") {
		t.Errorf("after following the link: %q\n%s", r.Title, r.Markdown)
	}
	if hits.Load() == 0 {
		t.Error("the allowed server saw no request")
	}
}

// A helper that dies is reported as ErrClosed with its last words, and a
// missing Chromium or malformed port as a clear error, before any start.
func TestFailures(t *testing.T) {
	if _, err := browser.NewPool(config.Web{Browser: config.Browser{LoopbackPorts: []int{70000}}}, nil); err == nil || !strings.Contains(err.Error(), "70000") {
		t.Errorf("port 70000: %v", err)
	}
	p, err := browser.NewPool(config.Web{Browser: config.Browser{Chromium: "no-such-browser-here"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Do(t.Context(), "r", browser.Command{Action: browser.ActionRead}); !errors.Is(err, browser.ErrNoChromium) {
		t.Errorf("no Chromium: %v", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dying := filepath.Join(t.TempDir(), "odin-browser")
	if err := os.WriteFile(dying, []byte("#!"+sh+"\necho 'cannot start: out of luck' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ODIN_BROWSER", dying)
	p, err = browser.NewPool(config.Web{Browser: config.Browser{Chromium: sh}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Do(t.Context(), "r", browser.Command{Action: browser.ActionRead})
	if !errors.Is(err, browser.ErrClosed) || !strings.Contains(err.Error(), "out of luck") {
		t.Errorf("a dying helper: %v", err)
	}
}
