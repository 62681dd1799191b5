package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/odin-code/odin/internal/serve"
	"github.com/odin-code/odin/messages"
)

// attachClient speaks odin serve's HTTP API (internal/serve/openapi.yaml)
// for odin attach. Safe for concurrent use.
type attachClient struct {
	base  string // scheme://host:port, no trailing slash
	token string
	hc    *http.Client // no overall timeout: event streams last; calls bound their own contexts
}

// apiError is an answer of the API that is not a success.
type apiError struct {
	Code int
	Msg  string
}

func (e *apiError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("odin serve answered %d %s", e.Code, http.StatusText(e.Code))
	}
	return fmt.Sprintf("odin serve answered %d: %s", e.Code, e.Msg)
}

// apiCallTimeout bounds one API call other than the event stream.
const apiCallTimeout = 15 * time.Second

// call sends one request and decodes a JSON answer into out (when not
// nil). A status of 300 or more is an *apiError.
func (c *attachClient) call(ctx context.Context, method, path string, hdr http.Header, body, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, apiCallTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return resp.StatusCode, &apiError{Code: resp.StatusCode, Msg: e.Error}
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

func sessionPath(id string, rest ...string) string {
	return "/v1/sessions/" + url.PathEscape(id) + strings.Join(rest, "")
}

func (c *attachClient) session(ctx context.Context, id string) (serve.Info, error) {
	var info serve.Info
	_, err := c.call(ctx, http.MethodGet, sessionPath(id), nil, nil, &info)
	return info, err
}

// resolve finds the session an ID or a unique prefix of one names, among
// the sessions the server holds and those stored under its roots.
func (c *attachClient) resolve(ctx context.Context, prefix string) (string, error) {
	if prefix == "" {
		return "", errors.New("no session ID")
	}
	info, err := c.session(ctx, prefix)
	var ae *apiError
	if err == nil {
		if info.ID != "" {
			return info.ID, nil
		}
		return prefix, nil
	}
	if !errors.As(err, &ae) || ae.Code != http.StatusNotFound {
		return "", err
	}
	seen := map[string]bool{}
	var live []serve.Info
	if _, err := c.call(ctx, http.MethodGet, "/v1/sessions", nil, nil, &live); err != nil {
		return "", err
	}
	for _, s := range live {
		if strings.HasPrefix(s.ID, prefix) {
			seen[s.ID] = true
		}
	}
	var stored []serve.HistoryItem
	// A server without history (501) still resolves its live sessions.
	if _, err := c.call(ctx, http.MethodGet, "/v1/history?limit=1000&q="+url.QueryEscape(prefix), nil, nil, &stored); err != nil && !errors.As(err, &ae) {
		return "", err
	}
	for _, s := range stored {
		if strings.HasPrefix(s.ID, prefix) {
			seen[s.ID] = true
		}
	}
	switch len(seen) {
	case 0:
		return "", fmt.Errorf("no session %s on %s", prefix, c.base)
	case 1:
		for id := range seen {
			return id, nil
		}
	}
	return "", fmt.Errorf("session prefix %s is ambiguous on %s (%d sessions); give more of the ID", prefix, c.base, len(seen))
}

// sseRecord is one event of the stream as sent: its id (0 for none), type
// and data.
type sseRecord struct {
	id   uint64
	typ  string
	data []byte
}

// maxSSELine bounds one line of the event stream: an event is one data
// line, and a turn's result (its diff) can be large, but not unbounded.
const maxSSELine = 32 << 20

// openEvents opens the session's event stream after the event last and
// sends its records on the returned channel, closed when the stream ends
// (the server ended it, the connection dropped, or ctx ended).
func (c *attachClient) openEvents(ctx context.Context, id string, last uint64) (<-chan sseRecord, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+sessionPath(id, "/events"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return nil, &apiError{Code: resp.StatusCode, Msg: e.Error}
	}
	out := make(chan sseRecord, 256)
	go streamSSE(ctx, resp, out)
	return out, nil
}

// streamSSE sends the records of resp's event stream on out until the
// stream ends or ctx does, then closes out and the response body. A read
// error ends the stream like its end: the caller reconnects from the last
// id it got.
func streamSSE(ctx context.Context, resp *http.Response, out chan<- sseRecord) {
	defer close(out)
	defer resp.Body.Close()
	_ = readSSE(resp.Body, func(r sseRecord) bool {
		select {
		case out <- r:
			return true
		case <-ctx.Done():
			return false
		}
	})
}

// readSSE parses a Server-Sent Events stream, calling emit for each event
// until emit returns false or the stream ends.
func readSSE(r io.Reader, emit func(sseRecord) bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var rec sseRecord
	var data bytes.Buffer
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if rec.typ != "" || data.Len() > 0 {
				if rec.typ == "" {
					rec.typ = "message"
				}
				rec.data = bytes.Clone(data.Bytes())
				if !emit(rec) {
					return nil
				}
			}
			rec, data = sseRecord{}, bytes.Buffer{}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "": // a comment
		case "id":
			rec.id, _ = strconv.ParseUint(string(value), 10, 64)
		case "event":
			rec.typ = string(value)
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		}
	}
}

// readLine reads one line without its end (LF or CRLF), refusing one
// longer than maxSSELine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxSSELine {
			return nil, fmt.Errorf("event stream: a line longer than %d bytes", maxSSELine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		return line, nil
	}
}

// queue is GET /v1/sessions/{id}/queue.
func (c *attachClient) queue(ctx context.Context, id string) (*messages.QueueState, error) {
	var qs messages.QueueState
	if _, err := c.call(ctx, http.MethodGet, sessionPath(id, "/queue"), nil, nil, &qs); err != nil {
		return nil, err
	}
	return &qs, nil
}
