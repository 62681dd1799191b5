package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web/webtest"
)

func searchFixtures(t *testing.T) map[string][]byte {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", "search.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range a.Files {
		out[f.Name] = f.Data
	}
	return out
}

// fakeBackend serves one backend's fixture after checking the request the
// way the real API would; it records the last request.
type fakeBackend struct {
	*httptest.Server
	last *http.Request
	body []byte
}

func newFakeBackend(t *testing.T, kind string, answer []byte, key string) *fakeBackend {
	fb := &fakeBackend{}
	fb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fb.last = r.Clone(r.Context())
		fb.body, _ = io.ReadAll(r.Body)
		ok := false
		switch kind {
		case "searxng":
			ok = r.Method == http.MethodGet && r.URL.Path == "/search" && r.URL.Query().Get("format") == "json"
		case "brave":
			ok = r.Method == http.MethodGet && r.Header.Get("X-Subscription-Token") == key
		case "tavily":
			ok = r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer "+key &&
				r.Header.Get("Content-Type") == "application/json"
		}
		if !ok {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(fb.Close)
	return fb
}

func TestSearchBackends(t *testing.T) {
	fx := searchFixtures(t)
	goBlog := SearchHit{Title: "Go Concurrency Patterns: Context", URL: "https://go.dev/blog/context"}
	tests := []struct {
		kind string
		key  string
		want []SearchHit
	}{
		{"searxng", "", []SearchHit{
			{Title: goBlog.Title, URL: goBlog.URL, Snippet: "The context package makes it easy to pass request-scoped values & cancelation signals.", Published: "2014-07-29T00:00:00", Engine: "duckduckgo"},
			{Title: "context package", URL: "https://pkg.go.dev/context", Snippet: "Package context defines the Context type.", Engine: "google"},
		}},
		{"brave", "brave-key", []SearchHit{
			{Title: goBlog.Title, URL: goBlog.URL, Snippet: "The context package makes it easy to pass cancelation signals.", Published: "2014-07-29T00:00:00", Engine: "brave"},
			{Title: "context package - context - Go Packages", URL: "https://pkg.go.dev/context", Snippet: "Package context defines the Context type.", Engine: "brave"},
		}},
		{"tavily", "tvly-key", []SearchHit{
			{Title: goBlog.Title, URL: goBlog.URL, Snippet: "The context package makes it easy to pass cancelation signals.", Published: "2014-07-29", Engine: "tavily"},
			{Title: "context package", URL: "https://pkg.go.dev/context", Snippet: "Package context defines the Context type.", Engine: "tavily"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			fb := newFakeBackend(t, tt.kind, fx[tt.kind+".json"], tt.key)
			// The configured URL's host is allowed although it is loopback.
			s, err := NewSearcher(config.Search{Kind: tt.kind, URL: fb.URL}, tt.key, WithVersion("1.2.3"))
			if err != nil {
				t.Fatal(err)
			}
			hits, err := s.Search(t.Context(), "go context cancellation", 2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, hits); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			if ua := fb.last.Header.Get("User-Agent"); ua != "Odin/1.2.3 (+https://github.com/odin-code/odin)" {
				t.Errorf("User-Agent %q", ua)
			}
			switch tt.kind {
			case "brave":
				if q := fb.last.URL.Query(); q.Get("q") != "go context cancellation" || q.Get("count") != "2" {
					t.Errorf("brave query %v", q)
				}
			case "searxng":
				if q := fb.last.URL.Query(); q.Get("q") != "go context cancellation" {
					t.Errorf("searxng query %v", q)
				}
			case "tavily":
				var body map[string]any
				if err := json.Unmarshal(fb.body, &body); err != nil || body["query"] != "go context cancellation" || body["max_results"] != float64(2) {
					t.Errorf("tavily body %s (%v)", fb.body, err)
				}
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	fx := searchFixtures(t)
	fb := newFakeBackend(t, "brave", fx["brave.json"], "right-key")
	s, err := NewSearcher(config.Search{Kind: "brave", URL: fb.URL}, "wrong-key")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(t.Context(), "q", 5)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "check the API key") {
		t.Errorf("bad key: %v", err)
	}
	if _, err := s.Search(t.Context(), "   ", 5); err == nil {
		t.Error("empty query accepted")
	}

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>not json</html>")
	}))
	t.Cleanup(garbage.Close)
	s, _ = NewSearcher(config.Search{Kind: "searxng", URL: garbage.URL}, "")
	if _, err := s.Search(t.Context(), "q", 5); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("non-JSON answer: %v", err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	s, _ = NewSearcher(config.Search{Kind: "searxng", URL: slow.URL}, "", WithTimeout(100*time.Millisecond))
	if _, err := s.Search(t.Context(), "q", 5); err == nil {
		t.Error("slow backend did not time out")
	}
}

func TestSearchAddressPolicy(t *testing.T) {
	// The public endpoint's name resolving to an internal address is
	// refused: only a URL the user configured is trusted.
	resolver := webtest.Resolver(map[string][]string{"api.search.brave.com": {"10.9.8.7"}})
	s, err := NewSearcher(config.Search{Kind: "brave"}, "key", WithResolver(resolver))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Search(t.Context(), "q", 3)
	var be *BlockedError
	if !errors.As(err, &be) || be.Addr != "10.9.8.7" {
		t.Fatalf("err = %v, want a *BlockedError for 10.9.8.7", err)
	}
}

func TestNewSearcherConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     config.Search
		key     string
		wantErr string
		notConf bool
	}{
		{"not configured", config.Search{}, "", "web search is not configured", true},
		{"searxng without url", config.Search{Kind: "searxng"}, "", "needs web.search.url", false},
		{"brave without key", config.Search{Kind: "brave"}, "", "needs an API key", false},
		{"tavily without key", config.Search{Kind: "Tavily"}, " ", "needs an API key", false},
		{"unknown kind", config.Search{Kind: "bing"}, "k", `unknown kind "bing"`, false},
		{"bad url", config.Search{Kind: "searxng", URL: "ftp://x"}, "", "not an http(s) URL", false},
		{"searxng ok", config.Search{Kind: "searxng", URL: "http://localhost:8888"}, "", "", false},
		{"brave ok", config.Search{Kind: "brave"}, "k", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSearcher(tt.cfg, tt.key)
			if tt.wantErr == "" {
				if err != nil || s == nil {
					t.Fatalf("NewSearcher = %v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || s != nil {
				t.Fatalf("NewSearcher = %v, %v; want nil and an error containing %q", s, err, tt.wantErr)
			}
			if errors.Is(err, ErrSearchNotConfigured) != tt.notConf {
				t.Errorf("errors.Is(ErrSearchNotConfigured) = %v", !tt.notConf)
			}
		})
	}
}
