package htmlproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/odin-code/odin/internal/helperproc"
	"github.com/odin-code/odin/internal/web"
)

// Serve answers Odin's fetch requests read from r, writing to w, until r
// ends. Fetches run concurrently; every HTTP request a fetch makes is sent
// to Odin as an "http" message and waits for its "http_resp".
func Serve(r io.Reader, w io.Writer) error {
	s := helperproc.NewServer[web.Msg](w, false)
	return s.Serve(r, func(ctx context.Context, m web.Msg) web.Msg {
		page, err := fetch(ctx, s, m)
		return web.Msg{Page: page, Err: web.EncodeError(err)}
	})
}

// transport is the http.RoundTripper of one fetch: it asks Odin to make
// the request. It has no way to open a connection itself.
type transport struct {
	s  *helperproc.Server[web.Msg]
	id uint64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if req.Method != http.MethodGet {
		return nil, fmt.Errorf("odin-fetch makes GET requests only, not %s", req.Method)
	}
	m, err := t.s.Ask(req.Context(), t.id, web.Msg{Method: req.Method, URL: req.URL.String(), Header: req.Header})
	if err != nil {
		return nil, err
	}
	if m.Err != nil {
		return nil, m.Err.Err()
	}
	if m.Status == 0 {
		return nil, errors.New("odin-fetch: Odin answered a request without a status")
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", m.Status, http.StatusText(m.Status)),
		StatusCode:    m.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        m.Header,
		Body:          io.NopCloser(bytes.NewReader(m.Body)),
		ContentLength: int64(len(m.Body)),
		Request:       req,
	}, nil
}
