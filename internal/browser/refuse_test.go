package browser_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/browser"
)

// TestWebSocketsAndPopupsRefused (issue 36, attack): the page's WebSocket
// and its pop-ups bypass the Fetch interception through which Odin applies
// its address policy, so odin-browser refuses them itself. Graded by the
// server: odin-browser runs unconfined here (no sandbox), so a WebSocket or
// a pop-up that got out would reach the test server directly and be
// counted. The agent is told of each refusal in the command's result.
func TestWebSocketsAndPopupsRefused(t *testing.T) {
	var upgrades, counted atomic.Int64
	files := http.FileServer(http.Dir("testdata"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ws":
			upgrades.Add(1)
			http.Error(w, "no", http.StatusBadRequest)
			return
		case r.URL.Path == "/counted.html":
			counted.Add(1)
		}
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, ps, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(ps)
	p := newPool(t, config.Web{Browser: config.Browser{LoopbackPorts: []int{port}}})
	ctx := t.Context()
	var told []string
	do := func(c browser.Command) *browser.Result {
		t.Helper()
		r, err := p.Do(ctx, "run1", c)
		if err != nil {
			t.Fatalf("%s: %v", c.Action, err)
		}
		told = append(told, r.Blocked...)
		return r
	}
	status := func() string {
		return do(browser.Command{Action: browser.ActionRead}).Markdown
	}

	do(browser.Command{Action: browser.ActionNavigate, URL: srv.URL + "/socket.html"})
	for i := 0; i < 50 && !strings.Contains(status(), "failed"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if s := status(); !strings.Contains(s, "Socket: failed") {
		t.Errorf("the page's WebSocket: %s, want it failed", s)
	}
	if n := upgrades.Load(); n != 0 {
		t.Errorf("the page's WebSocket reached the server (%d handshakes)", n)
	}
	want := "WebSocket ws://127.0.0.1:" + ps + "/ws: refused"
	if !containsPrefix(told, want) {
		t.Errorf("the agent was not told of the WebSocket; told %q", told)
	}

	told = nil
	do(browser.Command{Action: browser.ActionNavigate, URL: srv.URL + "/popup.html"})
	do(browser.Command{Action: browser.ActionClick, Selector: "#open"})
	do(browser.Command{Action: browser.ActionClick, Selector: "#blank"})
	var r *browser.Result
	for i := 0; i < 30 && countPrefix(told, "pop-up to ") < 2; i++ {
		time.Sleep(100 * time.Millisecond)
		r = do(browser.Command{Action: browser.ActionRead})
	}
	if n := countPrefix(told, "pop-up to "); n != 2 {
		t.Errorf("the agent was told of %d pop-ups, want 2: %q", n, told)
	}
	if r != nil && !strings.HasSuffix(r.URL, "/popup.html") {
		t.Errorf("the tab left the page for %s", r.URL)
	}
	time.Sleep(500 * time.Millisecond) // a pop-up that got out loads by now
	if n := counted.Load(); n != 0 {
		t.Errorf("pop-ups fetched their page: %d requests", n)
	}
}

func containsPrefix(list []string, prefix string) bool { return countPrefix(list, prefix) > 0 }

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
