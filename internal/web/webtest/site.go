package webtest

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"golang.org/x/text/encoding/htmlindex"
)

// Site is a local web site served from a txtar archive. Each file of the
// archive whose name starts with "/" is a page at that path. Three
// optional files adjust how pages are served, one directive per line
// ("#" starts a comment):
//
//	_headers    PATH Header-Name: value      (replaces the default header)
//	_redirects  PATH STATUS TARGET           (TARGET may be absolute)
//	_encode     PATH CHARSET                 (serve the page's text encoded)
//
// Content-Type defaults to the type of the page's extension (.html, .md,
// .txt, .json, .xml, .pdf, .png, .zip), else to what net/http sniffs. Bodies and redirect targets may use placeholders,
// replaced by the values given to NewSite (e.g. "{{peer}}" for another
// site's URL). Handlers added with Handle take precedence over files.
type Site struct {
	*httptest.Server

	mu       sync.Mutex
	files    map[string][]byte
	headers  map[string]http.Header
	redirect map[string]redirect
	handlers map[string]http.Handler
	hits     map[string]int
}

type redirect struct {
	status int
	target string
}

// NewSite parses archive (the txtar file at that path) and starts serving
// it; the server is closed when the test ends. vars are placeholder
// replacements ("{{peer}}" → URL).
func NewSite(t testing.TB, archive string, vars map[string]string) *Site {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatalf("webtest: %v", err)
	}
	s, err := parseSite(txtar.Parse(data), vars)
	if err != nil {
		t.Fatalf("webtest: %s: %v", archive, err)
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// NewEmptySite starts a site with no files, for tests that only Handle.
func NewEmptySite(t testing.TB) *Site {
	t.Helper()
	s, err := parseSite(&txtar.Archive{}, nil)
	if err != nil {
		t.Fatalf("webtest: %v", err)
	}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

func parseSite(a *txtar.Archive, vars map[string]string) (*Site, error) {
	s := &Site{
		files:    map[string][]byte{},
		headers:  map[string]http.Header{},
		redirect: map[string]redirect{},
		handlers: map[string]http.Handler{},
		hits:     map[string]int{},
	}
	expand := func(b []byte) []byte {
		out := string(b)
		for k, v := range vars {
			out = strings.ReplaceAll(out, k, v)
		}
		return []byte(out)
	}
	var encode []string
	for _, f := range a.Files {
		data := expand(f.Data)
		switch {
		case strings.HasPrefix(f.Name, "/"):
			s.files[f.Name] = data
		case f.Name == "_headers":
			err := eachLine(data, func(fields []string, line string) error {
				p, rest, _ := strings.Cut(line, " ")
				name, value, ok := strings.Cut(strings.TrimSpace(rest), ":")
				if !ok {
					return fmt.Errorf("_headers: want PATH Name: value, got %q", line)
				}
				if s.headers[p] == nil {
					s.headers[p] = http.Header{}
				}
				s.headers[p].Set(strings.TrimSpace(name), strings.TrimSpace(value))
				return nil
			})
			if err != nil {
				return nil, err
			}
		case f.Name == "_redirects":
			err := eachLine(data, func(fields []string, line string) error {
				if len(fields) != 3 {
					return fmt.Errorf("_redirects: want PATH STATUS TARGET, got %q", line)
				}
				code, err := strconv.Atoi(fields[1])
				if err != nil || code < 300 || code > 399 {
					return fmt.Errorf("_redirects: bad status in %q", line)
				}
				s.redirect[fields[0]] = redirect{status: code, target: fields[2]}
				return nil
			})
			if err != nil {
				return nil, err
			}
		case f.Name == "_encode":
			err := eachLine(data, func(fields []string, line string) error {
				if len(fields) != 2 {
					return fmt.Errorf("_encode: want PATH CHARSET, got %q", line)
				}
				encode = append(encode, fields...)
				return nil
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown file %q (pages start with /)", f.Name)
		}
	}
	for i := 0; i < len(encode); i += 2 {
		p, cs := encode[i], encode[i+1]
		body, ok := s.files[p]
		if !ok {
			return nil, fmt.Errorf("_encode: no page %s", p)
		}
		enc, err := htmlindex.Get(cs)
		if err != nil {
			return nil, fmt.Errorf("_encode: %s: %v", cs, err)
		}
		out, err := enc.NewEncoder().Bytes(body)
		if err != nil {
			return nil, fmt.Errorf("_encode: %s as %s: %v", p, cs, err)
		}
		s.files[p] = out
	}
	return s, nil
}

func eachLine(data []byte, fn func(fields []string, line string) error) error {
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := fn(strings.Fields(line), line); err != nil {
			return err
		}
	}
	return sc.Err()
}

// contentType is a fixed table so tests do not depend on the machine's
// mime.types.
func contentType(ext string) string {
	switch ext {
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	case ".md":
		return "text/markdown; charset=utf-8"
	case ".txt":
		return "text/plain; charset=utf-8"
	case ".json":
		return "application/json"
	case ".xml":
		return "application/xml"
	case ".pdf":
		return "application/pdf"
	case ".png":
		return "image/png"
	case ".zip":
		return "application/zip"
	}
	return ""
}

// Handle serves h at path (exact match), ahead of the archive's files.
func (s *Site) Handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// Hits is the number of requests received for path ("" for all paths).
func (s *Site) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path != "" {
		return s.hits[path]
	}
	n := 0
	for _, c := range s.hits {
		n += c
	}
	return n
}

// HostPort is the server's "host:port", the form web.allow_hosts takes.
func (s *Site) HostPort() string {
	u, _ := url.Parse(s.URL)
	return u.Host
}

// ServeHTTP implements http.Handler.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	s.mu.Lock()
	s.hits[p]++
	h := s.handlers[p]
	rd, isRedirect := s.redirect[p]
	body, isFile := s.files[p]
	hdr := s.headers[p]
	s.mu.Unlock()

	switch {
	case h != nil:
		h.ServeHTTP(w, r)
	case isRedirect:
		http.Redirect(w, r, rd.target, rd.status)
	case isFile:
		if ct := contentType(path.Ext(p)); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		for k, v := range hdr {
			w.Header()[k] = v
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", http.DetectContentType(body))
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	default:
		http.NotFound(w, r)
	}
}
