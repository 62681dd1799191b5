package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/browser"
)

// Without a pool the tool answers, as a result the model reads, that
// there is no browser.
func TestWebBrowserWithoutPool(t *testing.T) {
	res, err := NewWebBrowser(nil, nil).Run(t.Context(), nil, []byte(`{"action":"read"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "not available") {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// An unknown action is refused by the schema before any browser starts.
func TestWebBrowserRejectsUnknownAction(t *testing.T) {
	res, err := NewWebBrowser(nil, nil).Run(t.Context(), nil, []byte(`{"action":"download"}`))
	if err != nil || !res.IsError || strings.Contains(res.Output, "not available") {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// A failed action says what failed and lists the requests Odin refused;
// a browser that died says the next call starts a new one.
func TestWebBrowserFailure(t *testing.T) {
	res := webBrowserFailure(WebBrowserInput{Action: "navigate"}, &browser.CommandError{
		Msg: "page load error net::ERR_BLOCKED_BY_CLIENT", Blocked: []string{"GET http://10.0.0.1/: private address"}})
	for _, want := range []string{"navigate failed", "ERR_BLOCKED_BY_CLIENT", "GET http://10.0.0.1/: private address"} {
		if !res.IsError || !strings.Contains(res.Output, want) {
			t.Errorf("result lacks %q: %+v", want, res)
		}
	}
	res = webBrowserFailure(WebBrowserInput{Action: "read"}, errors.Join(browser.ErrClosed, errors.New("signal: killed")))
	if !strings.Contains(res.Output, "next call starts a new one") {
		t.Errorf("a dead browser: %s", res.Output)
	}
}

func TestCutText(t *testing.T) {
	long := strings.Repeat("line of page text\n", 100)
	got := cutText(long, 500)
	if len(got) > 600 || !strings.HasSuffix(got, "[The page text was cut at 500 bytes.]") {
		t.Errorf("cutText = %q", got)
	}
	if cutText("short", 500) != "short" {
		t.Error("a short text was changed")
	}
}
