package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/odin-code/odin/internal/helperproc"
)

// Msg is one line of the protocol between Odin and odin-fetch, the process
// that parses untrusted HTML (see proc.go). Odin sends "fetch" and
// "cancel" and answers "http" with "http_resp"; odin-fetch sends "http"
// (a request it wants made) and "result". odin-fetch has no network: every
// request it makes is an "http" message that Odin performs through its
// address policy, or refuses.
type Msg struct {
	helperproc.Line

	// fetch
	URL       string `json:"url,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
	MaxBytes  int64  `json:"max_bytes,omitempty"`
	Budget    int    `json:"budget,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`

	// http and http_resp
	Method string      `json:"method,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Status int         `json:"status,omitempty"`
	Body   []byte      `json:"body,omitempty"`

	// result
	Page *Page `json:"page,omitempty"`

	// http_resp and result
	Err *WireError `json:"error,omitempty"`
}

// Protocol operations.
const (
	OpFetch    = "fetch"
	OpCancel   = "cancel"
	OpHTTP     = "http"
	OpHTTPResp = "http_resp"
	OpResult   = "result"
)

// ops are the operations as helperproc's kinds of line.
var ops = helperproc.Ops{helperproc.KindCall: OpFetch, helperproc.KindCancel: OpCancel,
	helperproc.KindResult: OpResult, helperproc.KindRequest: OpHTTP, helperproc.KindResponse: OpHTTPResp}

// Route implements helperproc.Message.
func (m Msg) Route() helperproc.Route { return ops.Route(m.Line) }

// Routed implements helperproc.Message.
func (m Msg) Routed(r helperproc.Route) Msg { m.Line = ops.Line(r); return m }

// WireError carries a fetch error across the process boundary with its
// type, so that errors.Is and errors.As work on the other side.
type WireError struct {
	Kind string `json:"kind"`
	Msg  string `json:"msg"`
	// Blocked is set for Kind "blocked".
	Blocked *BlockedError `json:"blocked,omitempty"`
	// Status and URL are set for Kind "http".
	Status int    `json:"status,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Wire error kinds.
const (
	wireBlocked   = "blocked"
	wireLoop      = "redirect_loop"
	wireRedirects = "too_many_redirects"
	wireHTTP      = "http"
	wireTimeout   = "timeout"
	wireCanceled  = "canceled"
	wireOther     = "other"
)

// EncodeError turns err into its wire form; nil stays nil.
func EncodeError(err error) *WireError {
	if err == nil {
		return nil
	}
	var (
		blocked *BlockedError
		he      *HTTPError
	)
	w := &WireError{Kind: wireOther, Msg: err.Error()}
	switch {
	case errors.As(err, &blocked):
		w.Kind, w.Blocked = wireBlocked, blocked
	case errors.As(err, &he):
		w.Kind, w.Status, w.URL = wireHTTP, he.StatusCode, he.URL
	case errors.Is(err, ErrRedirectLoop):
		w.Kind = wireLoop
	case errors.Is(err, ErrTooManyRedirects):
		w.Kind = wireRedirects
	case errors.Is(err, context.Canceled):
		w.Kind = wireCanceled
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		w.Kind = wireTimeout
	}
	return w
}

// Err turns a wire error back into a Go error of the same type.
func (w *WireError) Err() error {
	if w == nil {
		return nil
	}
	switch w.Kind {
	case wireBlocked:
		if w.Blocked != nil {
			return w.Blocked
		}
	case wireHTTP:
		return &HTTPError{URL: w.URL, StatusCode: w.Status}
	case wireLoop:
		return wrapSentinel(ErrRedirectLoop, w.Msg)
	case wireRedirects:
		return wrapSentinel(ErrTooManyRedirects, w.Msg)
	case wireCanceled:
		return context.Canceled
	case wireTimeout:
		return fmt.Errorf("%s: %w", w.Msg, context.DeadlineExceeded)
	}
	return errors.New(w.Msg)
}

// wrapSentinel keeps msg (which already names the sentinel) and makes
// errors.Is(err, sentinel) hold.
func wrapSentinel(sentinel error, msg string) error {
	return &sentinelError{sentinel: sentinel, msg: msg}
}

type sentinelError struct {
	sentinel error
	msg      string
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.sentinel }

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
