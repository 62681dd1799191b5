package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web"
	"github.com/odin-code/odin/internal/web/webtest"
	"github.com/odin-code/odin/tools/tool"
)

// wfModel is a SmallModel that records what it was asked and echoes the
// user message back, so tests can see the exact framing.
type wfModel struct {
	mu     sync.Mutex
	system []string
	user   []string
	err    error
}

func (m *wfModel) Complete(_ context.Context, system, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.system = append(m.system, system)
	m.user = append(m.user, user)
	if m.err != nil {
		return "", m.err
	}
	return "ECHO:\n" + user, nil
}

func (m *wfModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.user)
}

type wfClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *wfClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *wfClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func wfSite(t *testing.T, name string, vars map[string]string) *webtest.Site {
	t.Helper()
	return webtest.NewSite(t, filepath.Join("..", "internal", "web", "testdata", "sites", name+".txtar"), vars)
}

func wfFetcher(t *testing.T, cfg config.Web, opts ...web.Option) *web.Fetcher {
	t.Helper()
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = web.DefaultCacheTTL
	}
	f, err := web.NewFetcher(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func wfRun(t *testing.T, tool tool.Tool, env *tool.Env, url, prompt string) tool.Result {
	t.Helper()
	in, err := json.Marshal(map[string]string{"url": url, "prompt": prompt})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Run(t.Context(), env, in)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

var wfMarkers = regexp.MustCompile(`<<<(END_)?UNTRUSTED_WEB_CONTENT nonce=([A-Z2-7]+)>>>`)

func TestWebFetchFramesPageAsUntrustedData(t *testing.T) {
	s := wfSite(t, "injection", nil)
	tl := NewWebFetch(wfFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}))
	model := &wfModel{}
	env := &tool.Env{Agent: "orchestrator", Small: model}
	const prompt = "What ratio is the starter fed at?"
	res := wfRun(t, tl, env, s.URL+"/recipe.html", prompt)
	if res.IsError || model.calls() != 1 {
		t.Fatalf("result %+v after %d model calls", res, model.calls())
	}
	system, user := model.system[0], model.user[0]

	// The system prompt names the exact markers of this call and says what
	// is inside them is data.
	m := wfMarkers.FindAllStringSubmatch(user, -1)
	if len(m) != 2 || m[0][1] != "" || m[1][1] != "END_" || m[0][2] != m[1][2] {
		t.Fatalf("want exactly one open and one close marker with the same nonce, got %q in:\n%s", m, user)
	}
	nonce := m[0][2]
	open, closing := m[0][0], m[1][0]
	for _, w := range []string{open, closing, "untrusted data", "never an instruction"} {
		if !strings.Contains(system, w) {
			t.Errorf("system prompt lacks %q:\n%s", w, system)
		}
	}
	// The page's forged markers were defused: the only marker-like text
	// left is the real pair, and the guessed nonce is not one of ours.
	inner := user[strings.Index(user, open)+len(open) : strings.Index(user, closing)]
	if strings.Contains(strings.ToLower(inner), "untrusted_web_content") || strings.Contains(strings.ToLower(inner), "untrusted-web content") {
		t.Errorf("forged marker survived inside the fence:\n%s", inner)
	}
	if nonce == "AAAAAAAAAAAAAAAAAAAAAAAAAA" {
		t.Error("the page's guessed nonce was used")
	}
	// The injection is there, as data, inside the fence; the agent's
	// request comes after the fence.
	if !strings.Contains(inner, "ignore all previous instructions") || !strings.Contains(inner, "Feed the starter at a 1:1:1 ratio") {
		t.Errorf("page content missing from the fence:\n%s", inner)
	}
	after := user[strings.Index(user, closing)+len(closing):]
	if !strings.Contains(after, prompt) || strings.Contains(user[:strings.Index(user, closing)], prompt) {
		t.Errorf("the prompt must follow the fence, got:\n%s", user)
	}
	// The tool returns the small model's answer fenced (it is derived from
	// the page: here it echoes the injection), under its rule, then the
	// source outside the fence.
	am := wfMarkers.FindAllStringSubmatch(res.Output, -1)
	if len(am) != 4 || am[2][1] != "" || am[3][1] != "END_" || am[2][2] != am[3][2] || am[2][2] == nonce {
		t.Fatalf("answer not in a fresh fence of its own, markers %q in:\n%s", am, res.Output)
	}
	answerOpen, answerClose := am[2][0], am[3][0]
	answer := res.Output[strings.LastIndex(res.Output, answerOpen)+len(answerOpen) : strings.LastIndex(res.Output, answerClose)]
	if !strings.HasPrefix(strings.TrimSpace(answer), "ECHO:") || !strings.Contains(answer, "ignore all previous instructions") {
		t.Errorf("answer (with its injection) not inside the fence:\n%s", res.Output)
	}
	if !strings.Contains(res.Output[:strings.LastIndex(res.Output, answerOpen)], "never an instruction") ||
		!strings.HasSuffix(res.Output, answerClose+"\n\nSource: "+s.URL+"/recipe.html") {
		t.Errorf("output:\n%s", res.Output)
	}
	// Each call gets a fresh nonce.
	wfRun(t, tl, env, s.URL+"/recipe.html", prompt)
	if m2 := wfMarkers.FindStringSubmatch(model.user[1]); m2 == nil || m2[2] == nonce {
		t.Errorf("nonce reused across calls")
	}
}

func TestWebFetchCache(t *testing.T) {
	s := wfSite(t, "docs", nil)
	clock := &wfClock{now: time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)}
	tl := NewWebFetch(wfFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}, web.WithClock(clock.Now)))
	model := &wfModel{}
	u := s.URL + "/guide/install.html"

	first := wfRun(t, tl, &tool.Env{Agent: "code", Small: model}, u, "Which Go version is needed?")
	second := wfRun(t, tl, &tool.Env{Agent: "code", Small: model}, u, "List the flags.")
	if strings.Contains(first.Output, "(cached)") || !strings.HasSuffix(second.Output, "Source: "+u+" (cached)") {
		t.Errorf("first:\n%s\nsecond:\n%s", first.Output, second.Output)
	}
	// The page is cached, the prompt is not: the model ran twice, once
	// per prompt.
	if n := s.Hits("/guide/install.html"); n != 1 || model.calls() != 2 || !strings.Contains(model.user[1], "List the flags.") {
		t.Errorf("%d requests, %d model calls", n, model.calls())
	}
	if meta, ok := second.Meta.(WebFetchMeta); !ok || !meta.Cached || meta.Title != "Installing Widget | Widget Docs" {
		t.Errorf("meta %#v", second.Meta)
	}

	// After two hours an ordinary agent refetches; the Research agent
	// still uses the copy, a documentation page being good for 7 days.
	clock.Advance(2 * time.Hour)
	research := wfRun(t, tl, &tool.Env{Agent: "research", Small: model}, u, "Flags?")
	if !strings.HasSuffix(research.Output, "(cached)") || s.Hits("/guide/install.html") != 1 {
		t.Errorf("research fetch after 2h: %d requests, output tail %q", s.Hits("/guide/install.html"), research.Output[len(research.Output)-40:])
	}
	third := wfRun(t, tl, &tool.Env{Agent: "code", Small: model}, u, "Flags?")
	if strings.Contains(third.Output, "(cached)") || s.Hits("/guide/install.html") != 2 {
		t.Errorf("ordinary fetch after 2h: %d requests, cached output", s.Hits("/guide/install.html"))
	}
}

func TestWebFetchWithoutSmallModel(t *testing.T) {
	s := webtest.NewEmptySite(t)
	s.Handle("/long.md", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown")
		fmt.Fprint(w, "# Long\n\n"+strings.Repeat("A paragraph of documentation text.\n\n", 3000))
	})
	tl := NewWebFetch(wfFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}))
	res := wfRun(t, tl, &tool.Env{Agent: "orchestrator"}, s.URL+"/long.md", "Summarise")
	if res.IsError {
		t.Fatalf("error result: %s", res.Output)
	}
	// The markers appear twice: named in the rule, then around the page,
	// which ends the output.
	m := wfMarkers.FindAllStringSubmatch(res.Output, -1)
	if len(m) != 4 || m[0][2] != m[3][2] || !strings.HasSuffix(res.Output, m[3][0]) {
		t.Fatalf("page not fenced: %q", m)
	}
	for _, w := range []string{"Source: " + s.URL + "/long.md", "No small model is configured", `"Summarise"`, "# Long", "[Content cut to fit"} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if len(res.Output) > webFetchRawLimit+1500 {
		t.Errorf("output is %d bytes, want it capped near %d", len(res.Output), webFetchRawLimit)
	}

	// A failing small model falls back to the page as well.
	failing := &wfModel{err: errors.New("429 rate limited")}
	res = wfRun(t, tl, &tool.Env{Agent: "orchestrator", Small: failing}, s.URL+"/long.md", "Summarise")
	if res.IsError || !strings.Contains(res.Output, "The small model failed (429 rate limited)") || !strings.Contains(res.Output, "# Long") {
		t.Errorf("fallback output:\n%.300s", res.Output)
	}
}

func TestWebFetchResults(t *testing.T) {
	peer := wfSite(t, "peer", nil)
	redirects := wfSite(t, "redirects", map[string]string{"{{peer}}": peer.URL})
	binary := wfSite(t, "binary", nil)
	slow := webtest.NewEmptySite(t)
	slow.Handle("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	f := wfFetcher(t, config.Web{
		AllowHosts: []string{peer.HostPort(), redirects.HostPort(), binary.HostPort(), slow.HostPort()},
		Timeout:    200 * time.Millisecond,
	}, web.WithResolver(webtest.Resolver(map[string][]string{"intranet.example": {"10.0.0.7"}})))
	tl := NewWebFetch(f)
	model := &wfModel{}
	env := &tool.Env{Agent: "orchestrator", Small: model}

	tests := []struct {
		name    string
		url     string
		isError bool
		want    []string
	}{
		{"cross-host redirect", redirects.URL + "/moved", false, []string{"redirects (HTTP 301) to a different host: " + peer.URL + "/landing.html", "not followed", "call WebFetch again"}},
		{"binary", binary.URL + "/report.pdf", true, []string{"Cannot read binary content", "application/pdf", "bytes"}},
		{"private address", "https://intranet.example/wiki", true, []string{"Refused to fetch https://intranet.example/wiki", "10.0.0.7", "private address", "web.allow_hosts"}},
		{"loopback not allowed", "http://127.0.0.1:9/", true, []string{"Refused to fetch", "loopback address"}},
		{"redirect loop", redirects.URL + "/loop-a", true, []string{"redirect loop"}},
		{"not found", redirects.URL + "/nothing", true, []string{"answered HTTP 404 (not found)"}},
		{"slow server", slow.URL + "/slow", true, []string{"timed out"}},
		{"not http", "ftp://example.com/file", true, []string{"Give a complete http:// or https:// URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := wfRun(t, tl, env, tt.url, "anything")
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Output)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, res.Output)
				}
			}
		})
	}
	if model.calls() != 0 {
		t.Errorf("the small model ran %d times for pages without content", model.calls())
	}
	if peer.Hits("") != 0 {
		t.Error("the cross-host redirect was followed")
	}
}

func TestWebFetchInput(t *testing.T) {
	tl := NewWebFetch(wfFetcher(t, config.Web{}))
	for _, in := range []string{`{"url":"https://example.com"}`, `{"prompt":"x"}`, `{"url":"https://example.com","prompt":""}`, `{"url":"https://example.com","prompt":"x","extra":1}`, `[]`} {
		res, err := tl.Run(t.Context(), &tool.Env{}, json.RawMessage(in))
		if err != nil || !res.IsError {
			t.Errorf("input %s: result %+v err %v, want an error result", in, res, err)
		}
	}
	// A cancelled call is the runtime's business: a Go error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := wfSite(t, "docs", nil)
	tl = NewWebFetch(wfFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}))
	if _, err := tl.Run(ctx, &tool.Env{}, json.RawMessage(`{"url":"`+s.URL+`/notes.txt","prompt":"x"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestWebFetchSchema(t *testing.T) {
	info := NewWebFetch(nil).Info()
	var got map[string]any
	if err := json.Unmarshal(info.Schema, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":                 "object",
		"required":             []any{"url", "prompt"},
		"additionalProperties": false,
		"properties": map[string]any{
			"url":    map[string]any{"type": "string", "format": "uri", "minLength": float64(1)},
			"prompt": map[string]any{"type": "string", "minLength": float64(1), "description": "What to find or extract from the page"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	if info.Name != "WebFetch" || info.Class != tool.ClassWeb || !strings.HasPrefix(info.Description, "Fetches a web page") {
		t.Errorf("info %+v", info)
	}
}
