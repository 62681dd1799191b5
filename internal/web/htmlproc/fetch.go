package htmlproc

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/web"
)

// accept prefers Markdown (some documentation sites serve it on request),
// then HTML, then anything.
const accept = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.5"

// conv is shared by all fetches: a Converter keeps per-call state in the
// call's context.
var conv = newConverter()

// fetch performs one fetch request m: colly does the HTTP work over t (so
// every request goes to Odin), with the redirect policy of web.Redirects,
// and everything colly would otherwise take from COLLY_* environment
// variables set explicitly. The page's FetchedAt is Odin's to set.
func fetch(ctx context.Context, s *helperproc.Server[web.Msg], m web.Msg) (*web.Page, error) {
	u, err := url.Parse(m.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", web.ErrInvalidURL, err)
	}
	timeout := time.Duration(m.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = web.DefaultTimeout
	}
	maxBytes := m.MaxBytes
	if maxBytes <= 0 {
		maxBytes = web.DefaultMaxBytes
	}
	budget := m.Budget
	if budget <= 0 {
		budget = web.DefaultBudget
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	rd := &web.Redirects{}
	c := colly.NewCollector()
	c.UserAgent = m.UserAgent
	// One byte over the cap tells a body that exactly fits from one that
	// was cut.
	c.MaxBodySize = int(maxBytes) + 1
	c.AllowURLRevisit = true
	c.ParseHTTPErrorResponse = true
	c.IgnoreRobotsTxt = true
	c.Async = false
	c.CacheDir = ""
	c.DetectCharset = false
	c.CheckHead = false
	c.TraceHTTP = false
	c.MaxDepth, c.MaxRequests = 0, 0
	c.AllowedDomains, c.DisallowedDomains = nil, nil
	c.URLFilters, c.DisallowedURLFilters = nil, nil
	c.Context = ctx
	c.SetClient(&http.Client{Transport: &transport{s: s, id: m.ID}, Timeout: timeout, CheckRedirect: rd.Check})

	var (
		resp      *colly.Response
		binary    bool
		binStatus int
		binType   string
		binSize   int64 = -1
		finalURL        = u
	)
	// A body declared binary is not downloaded (Odin does not send it
	// either): its type and size are all the model can use.
	c.OnResponseHeaders(func(r *colly.Response) {
		finalURL = r.Request.URL
		if r.StatusCode < 200 || r.StatusCode > 299 {
			return
		}
		mt := web.MediaType(r.Headers.Get("Content-Type"))
		if kind, ok := web.Classify(mt); ok && kind == web.KindBinary {
			binary, binStatus, binType = true, r.StatusCode, mt
			if n, err := strconv.ParseInt(r.Headers.Get("Content-Length"), 10, 64); err == nil {
				binSize = n
			}
			r.Request.Abort()
		}
	})
	c.OnResponse(func(r *colly.Response) { resp = r })

	hdr := http.Header{}
	hdr.Set("User-Agent", m.UserAgent)
	hdr.Set("Accept", accept)
	hdr.Set("Accept-Language", "en-US,en;q=0.8,*;q=0.5")
	err = c.Request(http.MethodGet, u.String(), nil, nil, hdr)

	page := &web.Page{URL: u.String(), FinalURL: finalURL.String()}
	switch {
	case binary:
		page.Status, page.Kind, page.ContentType, page.Size = binStatus, web.KindBinary, binType, binSize
		return page, nil
	case err != nil:
		return nil, err
	case resp == nil:
		return nil, fmt.Errorf("web: fetch %s: no response", u)
	}
	page.Status = resp.StatusCode
	if rd.CrossHost != nil && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		page.Kind, page.RedirectTo = web.KindRedirect, rd.CrossHost.String()
		return page, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &web.HTTPError{URL: page.FinalURL, StatusCode: resp.StatusCode}
	}
	if err := render(ctx, page, resp, finalURL, maxBytes, budget); err != nil {
		return nil, fmt.Errorf("web: %s: %w", u, err)
	}
	return page, nil
}

// render fills page's content from a successful response.
func render(ctx context.Context, page *web.Page, resp *colly.Response, finalURL *url.URL, maxBytes int64, budget int) error {
	body := resp.Body
	cutBody := int64(len(body)) > maxBytes
	if cutBody {
		body = body[:maxBytes]
	}
	page.Size = int64(len(body))

	ct := resp.Headers.Get("Content-Type")
	page.ContentType = web.MediaType(ct)
	kind, ok := web.Classify(page.ContentType)
	if !ok {
		kind, page.ContentType = sniff(body)
	}
	page.Kind = kind
	if kind == web.KindBinary {
		return nil
	}
	_, params, _ := mime.ParseMediaType(ct)
	text := decode(body, params["charset"] != "")

	switch kind {
	case web.KindHTML:
		title, md, err := htmlToMarkdown(ctx, conv, text, finalURL)
		if err != nil {
			return err
		}
		page.Title, text = title, md
	case web.KindJSON:
		if !cutBody {
			text = prettyJSON(text)
		}
	}
	if cutBody {
		text = strings.TrimRight(text, "\n") + fmt.Sprintf("\n\n[The response was larger than %d bytes; only the beginning was read.]", maxBytes)
	}
	content, cutText := web.Cut(text, budget)
	page.Content = content
	page.Truncated = cutBody || cutText
	return nil
}
