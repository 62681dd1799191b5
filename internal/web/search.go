package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/config"
)

// SearchHit is one web search result.
type SearchHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
	// Published is the date the backend gives, as it gives it.
	Published string `json:"published,omitempty"`
	// Engine is the backend, or for SearXNG the upstream engine.
	Engine string `json:"engine,omitempty"`
}

// Searcher queries a web search backend. Implementations are safe for
// concurrent use.
type Searcher interface {
	// Search returns up to n hits for query (n is clamped to 1..20).
	// Results without a URL are dropped and duplicates removed.
	Search(ctx context.Context, query string, n int) ([]SearchHit, error)
}

// Search backend defaults.
const (
	DefaultSearchTimeout = 15 * time.Second
	MaxSearchResults     = 20
	braveURL             = "https://api.search.brave.com/res/v1/web/search"
	tavilyURL            = "https://api.tavily.com/search"
	// maxSearchBody bounds a backend's answer; a results page is a few
	// tens of kilobytes.
	maxSearchBody = 4 << 20
)

// NewSearcher returns the backend named by cfg.Kind: "searxng" (cfg.URL
// required; apiKey optional, sent as a bearer token for instances behind
// an authenticating proxy), "brave" or "tavily" (apiKey required; cfg.URL
// overrides the public endpoint). Without a kind it returns nil and an
// error wrapping ErrSearchNotConfigured; a misconfigured backend is a
// plain error.
//
// Connections follow the Fetcher's address policy, except that the host
// of cfg.URL is allowed: the user chose it (typically a SearXNG on
// localhost), where the policy guards against addresses a model chose.
// Options WithAllowHosts, WithResolver, WithTimeout and WithVersion apply.
func NewSearcher(cfg config.Search, apiKey string, opts ...Option) (Searcher, error) {
	kind := strings.ToLower(strings.TrimSpace(cfg.Kind))
	if kind == "" {
		return nil, fmt.Errorf("%w: set web.search.kind to searxng, brave or tavily (with its url or api_key_env); the Research agent works from known URLs meanwhile", ErrSearchNotConfigured)
	}
	o := collect(opts)
	endpoint := strings.TrimSpace(cfg.URL)
	switch kind {
	case "searxng":
		if endpoint == "" {
			return nil, errors.New("web.search: searxng needs web.search.url (the instance's address, e.g. http://localhost:8888)")
		}
	case "brave", "tavily":
		if strings.TrimSpace(apiKey) == "" {
			return nil, fmt.Errorf("web.search: %s needs an API key in the environment variable named by web.search.api_key_env", kind)
		}
		if endpoint == "" {
			endpoint = map[string]string{"brave": braveURL, "tavily": tavilyURL}[kind]
		}
	default:
		return nil, fmt.Errorf("web.search: unknown kind %q (want searxng, brave or tavily)", cfg.Kind)
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web.search: url %q is not an http(s) URL", endpoint)
	}
	var allow []string
	if cfg.URL != "" {
		allow = append(allow, u.Host)
	}
	timeout := cmpOr(o.timeout, DefaultSearchTimeout)
	p, err := newPolicy(allow, o.resolver, timeout)
	if err != nil {
		return nil, err
	}
	c := &searchClient{
		kind:     kind,
		endpoint: u,
		apiKey:   strings.TrimSpace(apiKey),
		ua:       UserAgent(o.version),
		http: &http.Client{
			Transport: newTransport(p, timeout),
			Timeout:   timeout,
			// An API that redirects is misconfigured; following could
			// leak the key to another host.
			CheckRedirect: func(req *http.Request, _ []*http.Request) error {
				return fmt.Errorf("search backend redirected to %s; set web.search.url to the final address", req.URL.Redacted())
			},
		},
	}
	return c, nil
}

type searchClient struct {
	kind     string
	endpoint *url.URL
	apiKey   string
	ua       string
	http     *http.Client
}

func (c *searchClient) Search(ctx context.Context, query string, n int) ([]SearchHit, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errors.New("web search: empty query")
	}
	n = min(max(n, 1), MaxSearchResults)
	req, err := c.request(ctx, query, n)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", c.kind, err)
	}
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s search: %w", c.kind, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return nil, fmt.Errorf("%s search: read: %w", c.kind, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s search: HTTP %d%s: %s", c.kind, resp.StatusCode, statusHint(c.kind, resp.StatusCode), snippet(body))
	}
	hits, err := c.parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s search: decode response: %w", c.kind, err)
	}
	return dedupe(hits, n), nil
}

func (c *searchClient) request(ctx context.Context, query string, n int) (*http.Request, error) {
	u := *c.endpoint
	q := u.Query()
	switch c.kind {
	case "searxng":
		if !strings.HasSuffix(u.Path, "/search") {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
		}
		q.Set("q", query)
		q.Set("format", "json")
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err == nil && c.apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		return req, err
	case "brave":
		q.Set("q", query)
		q.Set("count", strconv.Itoa(n))
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err == nil {
			req.Header.Set("X-Subscription-Token", c.apiKey)
		}
		return req, err
	default: // tavily
		body, err := json.Marshal(map[string]any{"query": query, "max_results": n, "search_depth": "basic"})
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		return req, err
	}
}

// The backends' JSON shapes, reduced to the fields Odin reads.
type (
	searxngResponse struct {
		Results []struct {
			URL           string `json:"url"`
			Title         string `json:"title"`
			Content       string `json:"content"`
			Engine        string `json:"engine"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
	}
	braveResponse struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
				PageAge     string `json:"page_age"`
			} `json:"results"`
		} `json:"web"`
	}
	tavilyResponse struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
)

func (c *searchClient) parse(body []byte) ([]SearchHit, error) {
	var hits []SearchHit
	switch c.kind {
	case "searxng":
		var r searxngResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		for _, x := range r.Results {
			hits = append(hits, SearchHit{Title: plain(x.Title), URL: x.URL, Snippet: plain(x.Content), Published: x.PublishedDate, Engine: cmpOr(x.Engine, "searxng")})
		}
	case "brave":
		var r braveResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		for _, x := range r.Web.Results {
			hits = append(hits, SearchHit{Title: plain(x.Title), URL: x.URL, Snippet: plain(x.Description), Published: cmpOr(x.PageAge, x.Age), Engine: "brave"})
		}
	default:
		var r tavilyResponse
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, err
		}
		for _, x := range r.Results {
			hits = append(hits, SearchHit{Title: plain(x.Title), URL: x.URL, Snippet: plain(x.Content), Published: x.PublishedDate, Engine: "tavily"})
		}
	}
	return hits, nil
}

// dedupe keeps the first n hits that have an http(s) URL not seen before.
func dedupe(hits []SearchHit, n int) []SearchHit {
	out := make([]SearchHit, 0, min(len(hits), n))
	seen := map[string]bool{}
	for _, h := range hits {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || seen[h.URL] {
			continue
		}
		seen[h.URL] = true
		out = append(out, h)
		if len(out) == n {
			break
		}
	}
	return out
}

// plain strips the markup backends put in titles and snippets (Brave
// wraps matches in <strong>) and decodes entities. It reads markup as an
// HTML tokenizer does (a '<' opens a tag only before a letter, '/', '!'
// or '?'; quoted attribute values may hold '>'; comments run to "-->")
// without linking one: golang.org/x/net/html's initialiser builds its
// 2,231-entry entity map in every Odin process, for the few searches that
// need it (issue 37). The standard library's html builds its table on
// first use.
func plain(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.Join(strings.Fields(s), " ")
	}
	var b strings.Builder
	for s != "" {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(html.UnescapeString(s))
			break
		}
		b.WriteString(html.UnescapeString(s[:i]))
		s = s[i:]
		if len(s) < 2 || !opensTag(s[1]) || s == "</" {
			b.WriteByte('<')
			s = s[1:]
			continue
		}
		s = s[tagLen(s):]
		// Between two tags the tokenizer ends a text token: "a<b>b"
		// reads "ab", and Fields below joins what spaces separated.
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// opensTag reports whether c after a '<' starts a tag, an end tag, a
// comment or a declaration.
func opensTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// tagLen is the length of the tag, comment or declaration s starts with;
// one left open runs to the end of s.
func tagLen(s string) int {
	if strings.HasPrefix(s, "<!--") {
		// "<!-->" and "<!--->" are empty comments.
		for _, end := range []string{">", "->"} {
			if strings.HasPrefix(s[4:], end) {
				return 4 + len(end)
			}
		}
		// It ends at "-->" or "--!>".
		rest := s[4:]
		for off := 0; ; {
			j := strings.Index(rest[off:], "--")
			if j < 0 {
				return len(s)
			}
			k := off + j + 2
			if strings.HasPrefix(rest[k:], ">") {
				return 4 + k + 1
			}
			if strings.HasPrefix(rest[k:], "!>") {
				return 4 + k + 2
			}
			off += j + 1
		}
	}
	if s[1] == '!' || s[1] == '?' {
		// A declaration or a bogus comment: no attributes to quote.
		if j := strings.IndexByte(s, '>'); j >= 0 {
			return j + 1
		}
		return len(s)
	}
	var quote byte
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			// A quote opens a value only after '=' (possibly spaced):
			// elsewhere it is part of a name, as in the tokenizer.
			if afterEquals(s[:i]) {
				quote = c
			}
		case c == '>':
			return i + 1
		}
	}
	return len(s)
}

// afterEquals reports whether head ends in '=' and optional spaces.
func afterEquals(head string) bool {
	head = strings.TrimRight(head, " \t\n\f\r")
	return strings.HasSuffix(head, "=")
}

func statusHint(kind string, code int) string {
	switch {
	case kind == "searxng" && code == http.StatusForbidden:
		return " (enable the json format in the instance's settings.yml, search.formats)"
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return " (check the API key)"
	case code == http.StatusTooManyRequests:
		return " (rate limited; try again later)"
	}
	return ""
}

// snippet is the start of an error body, for the error message.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "")), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}
