// Package tape records a run's model traffic and plays it back: `odin run
// --record FILE` writes every model request and its response (redacted
// of keys) as JSON lines; `odin replay FILE` serves the recorded
// responses, in order, to a re-run of the same task, without a model
// server, and reports where the re-run's requests diverge from the
// recording. A replay with a changed prompt, roster or tool set shows
// what that change does to the requests and the gates, for free.
package tape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Version is the tape format's version, in its header.
const Version = 1

// Header is a tape's first line: what was run.
type Header struct {
	Type     string    `json:"type"` // "header"
	Version  int       `json:"version"`
	Task     string    `json:"task"`
	Mode     string    `json:"mode"`
	Odin     string    `json:"odin_version"`
	Recorded time.Time `json:"recorded"`
}

// Exchange is one model request and its response.
type Exchange struct {
	Type  string `json:"type"` // "exchange"
	Seq   int    `json:"seq"`
	Agent string `json:"agent"` // the X-Odin-Agent header
	// Method and Path of the request (the base URL is not kept).
	Method  string          `json:"method"`
	Path    string          `json:"path"`
	Request json.RawMessage `json:"request"`
	Status  int             `json:"status"`
	// ContentType and Body of the response (an SSE stream as text).
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
}

// Outcome is a tape's last line: how the recorded turn ended.
type Outcome struct {
	Type   string   `json:"type"` // "outcome"
	Status string   `json:"status"`
	Answer string   `json:"answer"`
	Files  []string `json:"files,omitempty"`
	Diff   string   `json:"diff,omitempty"`
	// Gates are the gate stages' verdicts, one line each ("review 1:
	// passed"), for the side-by-side report.
	Gates []string `json:"gates,omitempty"`
}

// Recorder is an http.RoundTripper that passes requests to Base and
// writes each exchange to the tape. Secrets (the provider keys) are
// replaced in everything written; headers are not written at all.
type Recorder struct {
	Base    http.RoundTripper
	secrets []string
	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	seq     int
	err     error
}

// Create starts a tape at path with its header.
func Create(path string, h Header, secrets []string) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	r := &Recorder{Base: http.DefaultTransport, f: f, w: bufio.NewWriter(f)}
	for _, s := range secrets {
		if len(s) >= 8 { // a short "secret" would redact ordinary text
			r.secrets = append(r.secrets, s)
		}
	}
	h.Type, h.Version = "header", Version
	r.line(h)
	return r, r.err
}

func (r *Recorder) redact(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "[REDACTED]")
	}
	return s
}

// line writes v as one line; called with r.mu held or before sharing.
func (r *Recorder) line(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		b = []byte(r.redact(string(b)))
		_, err = r.w.Write(append(b, '\n'))
	}
	if err == nil {
		err = r.w.Flush()
	}
	if err != nil && r.err == nil {
		r.err = err
	}
}

// RoundTrip records the exchange once its response body has been read
// to the end (or closed): the stream reaches the caller as it arrives.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := r.Base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ex := Exchange{Type: "exchange", Agent: req.Header.Get("X-Odin-Agent"), Method: req.Method, Path: req.URL.Path,
		Request: compactJSON(body), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	resp.Body = &capture{rc: resp.Body, done: func(got []byte) {
		ex.Body = string(got)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seq++
		ex.Seq = r.seq
		r.line(ex)
	}}
	return resp, nil
}

// Finish writes the outcome and closes the tape; the error says whether
// anything could not be written.
func (r *Recorder) Finish(o Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	o.Type = "outcome"
	r.line(o)
	if err := r.f.Close(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}

// capture keeps what is read through it and reports it once, at EOF or
// Close, whichever comes first.
type capture struct {
	rc   io.ReadCloser
	buf  bytes.Buffer
	once sync.Once
	done func([]byte)
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.buf.Write(p[:n])
	if errors.Is(err, io.EOF) {
		c.once.Do(func() { c.done(c.buf.Bytes()) })
	}
	return n, err
}

func (c *capture) Close() error {
	c.once.Do(func() { c.done(c.buf.Bytes()) })
	return c.rc.Close()
}

// readBody reads and closes a request's body (nil for none).
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

func compactJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		s, _ := json.Marshal(string(b))
		return s
	}
	return out.Bytes()
}

// Tape is a recording read back.
type Tape struct {
	Header    Header
	Exchanges []Exchange
	Outcome   *Outcome // nil when the recorded run did not finish
}

// Load reads a tape, with errors naming the line.
func Load(path string) (*Tape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &Tape{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 256<<20)
	for n := 1; sc.Scan(); n++ {
		var kind struct {
			Type string `json:"type"`
		}
		line := sc.Bytes()
		if err := json.Unmarshal(line, &kind); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		switch kind.Type {
		case "header":
			err = json.Unmarshal(line, &t.Header)
		case "exchange":
			var ex Exchange
			err = json.Unmarshal(line, &ex)
			t.Exchanges = append(t.Exchanges, ex)
		case "outcome":
			t.Outcome = &Outcome{}
			err = json.Unmarshal(line, t.Outcome)
		default:
			err = fmt.Errorf("unknown line type %q", kind.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if t.Header.Version != Version {
		return nil, fmt.Errorf("%s: not an odin tape of version %d (header: %+v)", path, Version, t.Header)
	}
	return t, nil
}
