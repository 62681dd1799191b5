package viewer_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/events"
	"github.com/odin-code/odin/internal/policy"
	"github.com/odin-code/odin/internal/present/presenttest"
	"github.com/odin-code/odin/internal/serve"
)

// TestEventLogReadsLikeTheTerminal plays the recorded gated turn of
// presenttest on a live session and reads the page's event log: it must
// show the gate rounds and the cost the terminal and odin run show for
// the same stream (cmd/odin's TestFrontEndsAgreeOnRoundsAndCosts). The
// page used to number QA's first run after a fix round as round 2.
func TestEventLogReadsLikeTheTerminal(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no chromium on PATH: install Debian's chromium (apt-get install chromium) to run the browser tests")
	}
	sess := &askingSession{bus: events.New("s1", time.Now), answers: make(chan policy.Decision, 1)}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Opener: askingOpener{sess}, Token: "tok", Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := &client{base: hs.URL, token: "tok"}
	var created struct {
		ID string `json:"id"`
	}
	c.do(t, "POST", "/v1/sessions", map[string]string{"project": root}, &created)
	// The server holds the events; the page reads them from the first.
	for _, ev := range presenttest.GatedTurn("in1") {
		sess.bus.Publish(ev)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	actx, cancel := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var log string
	must(t, "read the event log", chromedp.Run(ctx,
		chromedp.Navigate(hs.URL+"/#token=tok&session="+url.QueryEscape(created.ID)),
		chromedp.WaitReady(`#event-log li[data-type=turn_finished]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#event-log li')].map(e => e.textContent).join("\n")`, &log),
	))
	wantRounds, wantCosts := presenttest.Want()
	if diff := cmp.Diff(wantRounds, presenttest.Rounds(log)); diff != "" {
		t.Errorf("gate rounds (-want +got):\n%s\n%s", diff, log)
	}
	if diff := cmp.Diff(wantCosts, presenttest.Costs(log)); diff != "" {
		t.Errorf("costs (-want +got):\n%s\n%s", diff, log)
	}
}
