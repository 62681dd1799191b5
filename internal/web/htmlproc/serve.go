package htmlproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/odin-code/odin/internal/web"
)

// Serve answers Odin's fetch requests read from r, writing to w, until r
// ends. Fetches run concurrently; every HTTP request a fetch makes is sent
// to Odin as an "http" message and waits for its "http_resp".
func Serve(r io.Reader, w io.Writer) error {
	s := &server{out: bufio.NewWriter(w), fetches: map[uint64]context.CancelFunc{},
		pending: map[uint64]chan web.Msg{}}
	s.enc = json.NewEncoder(s.out)
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	var wg sync.WaitGroup
	defer func() {
		s.mu.Lock()
		for _, cancel := range s.fetches {
			cancel()
		}
		s.mu.Unlock()
		wg.Wait()
	}()
	for {
		var m web.Msg
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		switch m.Op {
		case web.OpFetch:
			ctx, cancel := context.WithCancel(context.Background())
			s.mu.Lock()
			s.fetches[m.ID] = cancel
			s.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer cancel()
				page, err := fetch(ctx, s, m)
				s.mu.Lock()
				delete(s.fetches, m.ID)
				s.mu.Unlock()
				_ = s.send(web.Msg{Op: web.OpResult, ID: m.ID, Page: page, Err: web.EncodeError(err)})
			}()
		case web.OpCancel:
			s.mu.Lock()
			if cancel := s.fetches[m.ID]; cancel != nil {
				cancel()
			}
			s.mu.Unlock()
		case web.OpHTTPResp:
			s.mu.Lock()
			ch := s.pending[m.Req]
			delete(s.pending, m.Req)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		default:
			return fmt.Errorf("unknown operation %q", m.Op)
		}
	}
}

type server struct {
	wmu sync.Mutex
	out *bufio.Writer
	enc *json.Encoder

	mu      sync.Mutex
	fetches map[uint64]context.CancelFunc
	pending map[uint64]chan web.Msg
	nextReq uint64
}

func (s *server) send(m web.Msg) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.enc.Encode(m); err != nil {
		return err
	}
	return s.out.Flush()
}

// transport is the http.RoundTripper of one fetch: it asks Odin to make
// the request. It has no way to open a connection itself.
type transport struct {
	s  *server
	id uint64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if req.Method != http.MethodGet {
		return nil, fmt.Errorf("odin-fetch makes GET requests only, not %s", req.Method)
	}
	ch := make(chan web.Msg, 1)
	t.s.mu.Lock()
	t.s.nextReq++
	n := t.s.nextReq
	t.s.pending[n] = ch
	t.s.mu.Unlock()
	forget := func() {
		t.s.mu.Lock()
		delete(t.s.pending, n)
		t.s.mu.Unlock()
	}
	if err := t.s.send(web.Msg{Op: web.OpHTTP, ID: t.id, Req: n, Method: req.Method, URL: req.URL.String(), Header: req.Header}); err != nil {
		forget()
		return nil, err
	}
	var m web.Msg
	select {
	case m = <-ch:
	case <-req.Context().Done():
		forget()
		return nil, context.Cause(req.Context())
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
