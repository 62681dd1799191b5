package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// odin-fetch parses untrusted HTML, so odin runs it in its sandbox with no
// network and nothing writable: every request it makes goes through odin's
// address policy. These tests run odin tool WebFetch through the CLI's
// wiring, once with the real odin-fetch (the page arrives, through odin)
// and once with a probe in its place that tries what a compromised parser
// would: write into the project, connect to the page's server itself, and
// read odin's environment.
func TestFetchProcessIsConfined(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed: the sandbox odin-fetch runs in is tested in internal/sandbox")
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Probe</title></head><body><main><h1>Widget</h1><p>Call widget.Run().</p></main></body></html>")
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	work := t.TempDir()
	project := filepath.Join(work, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "sk-odin-fetch-canary-7f3a"
	env := append(os.Environ(), "OPENAI_API_KEY="+secret, "OPENAI_BASE_URL=http://127.0.0.1:1/v1",
		"ODIN_PROVIDERS_OPENAI_MAX_RETRIES=0", "ODIN_WEB_ALLOW_HOSTS="+host+":"+port, "NO_COLOR=1",
		"HOME="+filepath.Join(work, ".home"), "XDG_STATE_HOME="+filepath.Join(work, ".state"),
		"XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	webFetch := func(page string, extra ...string) (string, error) {
		cmd := exec.Command(filepath.Join(binDir, "odin"), "tool", "WebFetch",
			fmt.Sprintf(`{"url":%q,"prompt":"How do I start a widget?"}`, srv.URL+page))
		cmd.Dir, cmd.Env = project, append(append([]string(nil), env...), extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := webFetch("/widget.html")
	if err != nil || !strings.Contains(out, "Call widget.Run().") {
		t.Fatalf("the real odin-fetch: %v\n%s", err, out)
	}
	if hits.Load() != 1 {
		t.Fatalf("the page was requested %d times, want 1", hits.Load())
	}

	canary := filepath.Join(project, "written-by-odin-fetch")
	probe := filepath.Join(work, "probe")
	script := fmt.Sprintf(`#!/bin/bash
echo pwned > %q 2>/dev/null
{ exec 3<>/dev/tcp/%s/%s; } 2>/dev/null && printf 'GET /direct HTTP/1.0\r\n\r\n' >&3
echo "PROBE-RAN env: $(env | tr '\n' ' ')" >&2
exit 3
`, canary, host, port)
	if err := os.WriteFile(probe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Another page: the first is cached.
	out, _ = webFetch("/other.html", "ODIN_FETCH="+probe)
	if !strings.Contains(out, "PROBE-RAN") {
		t.Fatalf("the probe did not run in odin-fetch's place (its stderr line is not reported):\n%s", out)
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Errorf("odin-fetch wrote into the project (%v)", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("odin-fetch reached the server itself: %d requests, want the 1 odin made", n)
	}
	if strings.Contains(out, secret) {
		t.Errorf("odin's API key reached odin-fetch's environment:\n%s", out)
	}
}

// odin's own binary links neither colly (with its App Engine imports) nor
// the HTML converter: they live in odin-fetch, which costs odin nothing at
// start-up and parses untrusted HTML in a confined process.
func TestOdinLinksNoHTMLParser(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/odin-code/odin/cmd/odin").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/gocolly/colly", "google.golang.org/appengine", "github.com/JohannesKaufmann/html-to-markdown", "github.com/PuerkitoBio/goquery"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("odin links %s; it belongs in odin-fetch", dep)
			}
		}
	}
}
