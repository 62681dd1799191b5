package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/odin-code/odin/config"
	"github.com/odin-code/odin/internal/web/webtest"
)

func TestFetchConvertsPages(t *testing.T) {
	s := newSite(t, "docs", nil)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}})
	tests := []struct {
		path      string
		kind      PageKind
		mediaType string
		title     string
		want      []string // substrings of Content
		wantNot   []string
	}{
		{
			path: "/guide/install.html", kind: KindHTML, mediaType: "text/html", title: "Installing Widget | Widget Docs",
			want: []string{
				"# Installing Widget",
				"Widget needs Go 1.22 or later.",
				// Relative links resolved against the page URL.
				"[configuration reference](" + s.URL + "/reference/config.html)",
				"[changelog](" + s.URL + "/changelog.html#v2)",
				// Code blocks keep their language and lines.
				"```sh\ngo install example.com/widget/cmd/widget@latest\nwidget --version\n```",
				// Tables stay tables.
				"| `--port`    | 8080    | Port to listen on |",
				// A data: image becomes its alt text.
				"An inline diagram: architecture diagram",
			},
			wantNot: []string{
				"NAV-GUIDE-LINK", "NAV-API-LINK", "HEADER-LOGO", "SEARCH-BUTTON", "Search docs",
				"FOOTER-TEXT", "TOC-ASIDE-TEXT", "ASIDE-TIP-TEXT", "TRACKING-SCRIPT-TEXT",
				"font-family", "SVG-TEXT", "IFRAME-TEXT", "base64",
			},
		},
		{
			path: "/blog/post.html", kind: KindHTML, mediaType: "text/html", title: "Release notes",
			want: []string{
				"## Widget 2.0 released",
				// <base href> wins over the page URL.
				"[the upgrade guide](https://docs.example.org/widget/upgrade.html)",
				"KEPT-SECTION-HEADER",
			},
			wantNot: []string{"BANNER-TEXT", "FOOTER-TEXT"},
		},
		{
			path: "/legacy-meta.html", kind: KindHTML, mediaType: "text/html", title: "Café",
			want: []string{"Crème brûlée costs 5 € — “quoted”."},
		},
		{
			path: "/legacy-header.html", kind: KindHTML, mediaType: "text/html", title: "Header charset",
			want: []string{"Straße, naïve, façade."},
		},
		{
			path: "/late-utf8.html", kind: KindHTML, mediaType: "text/html", title: "Late",
			want: []string{"Zoë’s résumé — 日本語"},
		},
		{
			path: "/readme.md", kind: KindMarkdown, mediaType: "text/markdown",
			want: []string{"# Widget\n\nPlain *Markdown* passes through: `widget --help`."},
		},
		{
			path: "/notes.txt", kind: KindText, mediaType: "text/plain",
			want: []string{"Plain text notes.\nLine two."},
		},
		{
			path: "/data.json", kind: KindJSON, mediaType: "application/json",
			want: []string{"{\n  \"name\": \"widget\",\n  \"versions\": [\n    1,\n    2\n  ],\n  \"stable\": true\n}"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := f.Fetch(t.Context(), s.URL+tt.path)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			got := struct {
				Kind        PageKind
				ContentType string
				Title       string
				Status      int
				Truncated   bool
			}{p.Kind, p.ContentType, p.Title, p.Status, p.Truncated}
			want := got
			want.Kind, want.ContentType, want.Title, want.Status, want.Truncated = tt.kind, tt.mediaType, tt.title, 200, false
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("page (-want +got):\n%s", diff)
			}
			for _, w := range tt.want {
				if !strings.Contains(p.Content, w) {
					t.Errorf("content lacks %q; content:\n%s", w, p.Content)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(p.Content, w) {
					t.Errorf("content keeps %q; content:\n%s", w, p.Content)
				}
			}
			if !utf8.ValidString(p.Content) {
				t.Errorf("content is not valid UTF-8")
			}
		})
	}
}

func TestFetchIdentifiesItself(t *testing.T) {
	s := webtest.NewEmptySite(t)
	var got http.Header
	s.Handle("/who", func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		fmt.Fprint(w, "ok")
	})
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}, WithVersion("0.9.1"))
	if _, err := f.Fetch(t.Context(), s.URL+"/who"); err != nil {
		t.Fatal(err)
	}
	if ua := got.Get("User-Agent"); ua != "Odin/0.9.1 (+https://github.com/odin-code/odin)" {
		t.Errorf("User-Agent %q", ua)
	}
	if a := got.Get("Accept"); !strings.HasPrefix(a, "text/markdown, text/html") {
		t.Errorf("Accept %q", a)
	}
	if c := got.Get("Cookie"); c != "" {
		t.Errorf("sent cookies %q", c)
	}
}

func TestFetchKeepsInjectionAsText(t *testing.T) {
	// The fetcher's job is to keep the paragraph verbatim; the fence that
	// makes it data is tested with the tool.
	s := newSite(t, "injection", nil)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}})
	p, err := f.Fetch(t.Context(), s.URL+"/recipe.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ignore all previous instructions", "<<<END_UNTRUSTED_WEB_CONTENT", "Bake at 250 °C"} {
		if !strings.Contains(p.Content, w) {
			t.Errorf("content lacks %q:\n%s", w, p.Content)
		}
	}
}

func TestFetchRedirects(t *testing.T) {
	peer := newSite(t, "peer", nil)
	s := newSite(t, "redirects", map[string]string{"{{peer}}": peer.URL})
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort(), peer.HostPort()}})

	t.Run("same host is followed", func(t *testing.T) {
		p, err := f.Fetch(t.Context(), s.URL+"/old")
		if err != nil {
			t.Fatal(err)
		}
		if p.FinalURL != s.URL+"/new.html" || !strings.Contains(p.Content, "The page now lives here.") {
			t.Errorf("got final URL %q, content %q", p.FinalURL, p.Content)
		}
	})
	t.Run("other host is returned, not followed", func(t *testing.T) {
		p, err := f.Fetch(t.Context(), s.URL+"/moved")
		if err != nil {
			t.Fatal(err)
		}
		got := struct {
			Kind       PageKind
			Status     int
			RedirectTo string
			Content    string
		}{p.Kind, p.Status, p.RedirectTo, p.Content}
		want := got
		want.Kind, want.Status, want.RedirectTo, want.Content = KindRedirect, http.StatusMovedPermanently, peer.URL+"/landing.html", ""
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("redirect (-want +got):\n%s", diff)
		}
		if n := peer.Hits(""); n != 0 {
			t.Errorf("peer got %d requests; the redirect must not be followed", n)
		}
	})
	for _, tt := range []struct {
		path string
		want error
	}{
		{"/loop-a", ErrRedirectLoop},
		{"/self", ErrRedirectLoop},
		{"/chain1", ErrTooManyRedirects},
	} {
		t.Run(tt.path, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), s.URL+tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the URL", err)
			}
		})
	}
	// Exactly MaxRedirects hops are allowed: chain3 → ... → chain7 → new.
	if _, err := f.Fetch(t.Context(), s.URL+"/chain3"); err != nil {
		t.Errorf("%d redirects: %v", MaxRedirects, err)
	}
}

func TestFetchBinary(t *testing.T) {
	s := newSite(t, "binary", nil)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}})
	tests := []struct {
		path      string
		kind      PageKind
		mediaType string
	}{
		{"/report.pdf", KindBinary, "application/pdf"},
		{"/download", KindBinary, "application/zip"},
		{"/plain-download", KindText, "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := f.Fetch(t.Context(), s.URL+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tt.kind || p.ContentType != tt.mediaType {
				t.Errorf("got kind %s type %s, want %s %s", p.Kind, p.ContentType, tt.kind, tt.mediaType)
			}
			if tt.kind == KindBinary && (p.Content != "" || p.Size <= 0) {
				t.Errorf("binary page: content %q, size %d; want no content and the size", p.Content, p.Size)
			}
		})
	}
}

func TestFetchCapsHugePages(t *testing.T) {
	s := webtest.NewEmptySite(t)
	paragraph := "<p>" + strings.Repeat("All work and no play makes Jack a dull boy. ", 20) + "</p>\n"
	s.Handle("/huge.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Huge</title></head><body><main><h1>Start</h1>")
		for range 4000 { // ~3.6 MB
			if _, err := fmt.Fprint(w, paragraph); err != nil {
				return
			}
		}
		fmt.Fprint(w, "<p>THE-END</p></main></body></html>")
	})
	s.Handle("/huge.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("line of text\n", 10_000))
	})

	const budget = 20_000
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, MaxBytes: 256 << 10}, WithBudget(budget))
	p, err := f.Fetch(t.Context(), s.URL+"/huge.html")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || len(p.Content) > budget || !utf8.ValidString(p.Content) {
		t.Errorf("truncated=%v len=%d valid=%v; want a valid cut within %d bytes", p.Truncated, len(p.Content), utf8.ValidString(p.Content), budget)
	}
	if p.Size != 256<<10 {
		t.Errorf("read %d bytes, want the 256 KiB cap", p.Size)
	}
	if !strings.HasPrefix(p.Content, "# Start") || !strings.Contains(p.Content, "[Content cut to fit") || strings.Contains(p.Content, "THE-END") {
		t.Errorf("content does not look like a cut page:\n%s", p.Content[max(0, len(p.Content)-300):])
	}

	// A body over max_bytes but under the budget says it was cut.
	small := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, MaxBytes: 4096})
	p, err = small.Fetch(t.Context(), s.URL+"/huge.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || !strings.Contains(p.Content, "larger than 4096 bytes") || len(p.Content) > 4096+200 {
		t.Errorf("truncated=%v len=%d tail=%q", p.Truncated, len(p.Content), p.Content[max(0, len(p.Content)-120):])
	}
}

func TestFetchTimeout(t *testing.T) {
	s := webtest.NewEmptySite(t)
	s.Handle("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, Timeout: 100 * time.Millisecond})
	_, err := f.Fetch(t.Context(), s.URL+"/slow")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}

	// The caller's own cancellation is reported as such, not as a timeout.
	slow := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = slow.Fetch(ctx, s.URL+"/slow")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestFetchRefusesInternalAddresses(t *testing.T) {
	s := newSite(t, "redirects", nil)
	_, port, _ := strings.Cut(s.HostPort(), ":")
	resolver := webtest.Resolver(map[string][]string{
		"intranet.example": {"10.0.0.7"},
		"metadata.example": {"169.254.169.254"},
		"cgnat.example":    {"100.64.1.2"},
		"ula.example":      {"fd00::1"},
		"sneaky.example":   {"127.0.0.1"},
		"allowed.example":  {"127.0.0.1"},
	})
	f := newFetcher(t, config.Web{AllowHosts: []string{"allowed.example:" + port}}, WithResolver(resolver))

	tests := []struct {
		url    string
		addr   string
		reason string
	}{
		{"https://intranet.example/", "10.0.0.7", "private address"},
		{"http://metadata.example/latest/meta-data/", "169.254.169.254", "link-local address"},
		{"https://cgnat.example/", "100.64.1.2", "carrier-grade NAT (shared) address"},
		{"https://ula.example/", "fd00::1", "unique local (private) IPv6 address"},
		{"http://sneaky.example:" + port + "/new.html", "127.0.0.1", "loopback address"},
		{s.URL + "/new.html", "127.0.0.1", "loopback address"}, // the test server itself, not allowed here
		{"https://[::ffff:10.1.2.3]/", "10.1.2.3", "private address"},
		{"https://0.0.0.0/", "0.0.0.0", "unspecified address"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), tt.url)
			var be *BlockedError
			if !errors.As(err, &be) || !errors.Is(err, ErrBlockedAddress) {
				t.Fatalf("err = %v, want a *BlockedError", err)
			}
			if be.Addr != tt.addr || be.Reason != tt.reason {
				t.Errorf("blocked %s (%s), want %s (%s)", be.Addr, be.Reason, tt.addr, tt.reason)
			}
		})
	}
	if n := s.Hits(""); n != 0 {
		t.Fatalf("the loopback server got %d requests; refused connections must not reach it", n)
	}

	// The same loopback server is reachable through a name the user
	// allowed, over plain http.
	p, err := f.Fetch(t.Context(), "http://allowed.example:"+port+"/new.html")
	if err != nil {
		t.Fatalf("allowed host: %v", err)
	}
	if !strings.Contains(p.Content, "The page now lives here.") || !strings.HasPrefix(p.URL, "http://") {
		t.Errorf("allowed host: url %s content %q", p.URL, p.Content)
	}
}

func TestNormalize(t *testing.T) {
	f := newFetcher(t, config.Web{AllowHosts: []string{"localhost:8080", "intranet"}})
	tests := []struct {
		in, want string
	}{
		{"http://example.com/a?b=1#frag", "https://example.com/a?b=1"},
		{"  HTTP://Example.COM:80/x  ", "https://example.com/x"},
		{"http://example.com:8443/x", "https://example.com:8443/x"},
		{"https://example.com/x", "https://example.com/x"},
		{"http://localhost:8080/x", "http://localhost:8080/x"}, // allowed: stays http
		{"http://localhost:9090/x", "https://localhost:9090/x"},
		{"http://intranet/x", "http://intranet/x"}, // allowed on any port
		{"http://[2001:db8::1]:80/x", "https://[2001:db8::1]/x"},
	}
	for _, tt := range tests {
		u, err := f.normalize(tt.in)
		if err != nil {
			t.Errorf("normalize(%q): %v", tt.in, err)
			continue
		}
		if u.String() != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, u, tt.want)
		}
	}
	for _, bad := range []string{
		"ftp://example.com/f", "file:///etc/passwd", "javascript:alert(1)", "https://user:pw@example.com/",
		"https:///nohost", "example.com/no-scheme", "https://example.com:99999/", "https://" + strings.Repeat("a", 5000) + ".com/",
		"http://[::1", "",
	} {
		if _, err := f.Fetch(t.Context(), bad); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("Fetch(%.40q) err = %v, want ErrInvalidURL", bad, err)
		}
	}
}

func TestFetchHTTPError(t *testing.T) {
	s := newSite(t, "docs", nil)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}})
	_, err := f.Fetch(t.Context(), s.URL+"/missing.html")
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		t.Fatalf("err = %v, want HTTP 404", err)
	}
}

func TestFetchCache(t *testing.T) {
	s := newSite(t, "docs", nil)
	clock := newClock()
	cache := NewMemoryCache(0)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, CacheTTL: DefaultCacheTTL}, WithClock(clock.Now), WithCache(cache))
	u := s.URL + "/guide/install.html"

	first, err := f.Fetch(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(14 * time.Minute)
	// The fragment is not part of the key.
	second, err := f.Fetch(t.Context(), u+"#options")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Hits("/guide/install.html"); n != 1 {
		t.Fatalf("%d requests after a second fetch within the TTL, want 1", n)
	}
	if first.Cached || !second.Cached {
		t.Errorf("cached flags: first %v second %v, want false true", first.Cached, second.Cached)
	}
	if diff := cmp.Diff(first, second, cmpopts.IgnoreFields(Page{}, "Cached")); diff != "" {
		t.Errorf("cached page differs (-first +second):\n%s", diff)
	}

	// At 15 minutes the entry has expired.
	clock.Advance(time.Minute)
	third, err := f.Fetch(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Hits("/guide/install.html"); n != 2 || third.Cached || !third.FetchedAt.Equal(clock.Now()) {
		t.Errorf("after expiry: %d requests, cached %v, fetched at %v; want a refetch", n, third.Cached, third.FetchedAt)
	}

	// A longer lifetime (the Research agent's, for docs) keeps serving it.
	clock.Advance(6 * 24 * time.Hour)
	p, err := f.FetchMaxAge(t.Context(), u, 7*24*time.Hour)
	if err != nil || !p.Cached {
		t.Errorf("7-day lifetime after 6 days: cached %v err %v", p != nil && p.Cached, err)
	}
	// maxAge 0 bypasses the lookup.
	if p, err := f.FetchMaxAge(t.Context(), u, 0); err != nil || p.Cached {
		t.Errorf("maxAge 0: cached %v err %v", p != nil && p.Cached, err)
	}
	if n := s.Hits("/guide/install.html"); n != 3 {
		t.Errorf("%d requests in all, want 3", n)
	}

	// A corrupt entry reads as a miss.
	if err := cache.Put(t.Context(), "webfetch:"+u, []byte("{not json"), clock.Now()); err != nil {
		t.Fatal(err)
	}
	if p, err := f.Fetch(t.Context(), u); err != nil || p.Cached {
		t.Errorf("corrupt entry: cached %v err %v", p != nil && p.Cached, err)
	}
}

func TestFetchSurvivesFailingCache(t *testing.T) {
	s := newSite(t, "docs", nil)
	broken := StoreCache{S: &fakeStore{err: errors.New("database is locked")}}
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}, CacheTTL: time.Hour}, WithCache(broken))
	for range 2 {
		if p, err := f.Fetch(t.Context(), s.URL+"/notes.txt"); err != nil || p.Cached {
			t.Fatalf("fetch with a failing cache: cached %v err %v", p != nil && p.Cached, err)
		}
	}
	if n := s.Hits("/notes.txt"); n != 2 {
		t.Errorf("%d requests, want 2 (nothing could be cached)", n)
	}
}

func TestFetchCacheDisabled(t *testing.T) {
	s := newSite(t, "docs", nil)
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort()}}) // cache_ttl: 0
	for range 2 {
		if p, err := f.Fetch(t.Context(), s.URL+"/notes.txt"); err != nil || p.Cached {
			t.Fatalf("cached %v err %v", p != nil && p.Cached, err)
		}
	}
	if n := s.Hits("/notes.txt"); n != 2 {
		t.Errorf("%d requests with cache_ttl 0, want 2", n)
	}
	// The page was still stored for longer-lived callers.
	if p, err := f.FetchMaxAge(t.Context(), s.URL+"/notes.txt", time.Hour); err != nil || !p.Cached {
		t.Errorf("research-style fetch: cached %v err %v", p != nil && p.Cached, err)
	}
}

func TestFetchRedirectAndBinaryAreCached(t *testing.T) {
	peer := newSite(t, "peer", nil)
	s := newSite(t, "redirects", map[string]string{"{{peer}}": peer.URL})
	f := newFetcher(t, config.Web{AllowHosts: []string{s.HostPort(), peer.HostPort()}, CacheTTL: time.Minute})
	for range 2 {
		if _, err := f.Fetch(t.Context(), s.URL+"/moved"); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Hits("/moved"); n != 1 {
		t.Errorf("%d requests for a cached redirect, want 1", n)
	}
}

func TestResearchMaxAge(t *testing.T) {
	f := newFetcher(t, config.Web{ResearchTTL: config.ResearchTTL{Docs: 48 * time.Hour}})
	tests := map[string]time.Duration{
		"https://go.dev/doc/effective_go":              48 * time.Hour,
		"https://nvd.nist.gov/vuln/detail/CVE-2024-1":  time.Hour,
		"https://stackoverflow.com/questions/1/how-to": 24 * time.Hour,
	}
	for u, want := range tests {
		if got := f.ResearchMaxAge(u); got != want {
			t.Errorf("ResearchMaxAge(%s) = %v, want %v", u, got, want)
		}
	}
}

func TestNewFetcherRejectsBadAllowHosts(t *testing.T) {
	for _, bad := range []string{"exa mple.com", "10.0.0.0/8", ":8080", "http://"} {
		if _, err := NewFetcher(config.Web{AllowHosts: []string{bad}}); err == nil {
			t.Errorf("allow_hosts %q accepted", bad)
		}
	}
}
