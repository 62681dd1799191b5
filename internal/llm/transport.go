package llm

import (
	"net/http"
)

// writeBufferSize is a provider connection's write buffer (net/http's
// default is 4 KiB). With the body handed over as bytes (inMemoryBody), a
// request's headers and body are buffered together and go out in one
// write when they fit; a larger request takes two writes and still no
// copy buffer. The buffer is allocated with its connection and serves all
// its requests; a fan-out's first turn dials one connection per
// specialist, so 16 KiB — a specialist's first requests, not its longest
// — keeps that burst at 4 MiB for 256 of them.
const writeBufferSize = 16 << 10

// inMemoryBody sends each request with its body as the bytes it is.
// openai-go wraps every body in a reader of its own, which net/http cannot
// tell is in memory: it then flushes the headers in a write of their own
// and copies the body behind them through a fresh buffer — two writes and
// an allocation per request, on both ends of the connection, hundreds of
// times in a fan-out. The request's GetBody (openai-go sets it for a body
// of bytes) gives the same bytes again as a reader net/http knows.
type inMemoryBody struct {
	base *http.Transport
}

// RoundTrip implements http.RoundTripper. The request is not modified:
// a shallow copy carries the new body, and the given one is closed, as a
// RoundTripper must.
func (t inMemoryBody) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.GetBody == nil || r.Body == nil || r.Body == http.NoBody || r.ContentLength <= 0 {
		return t.base.RoundTrip(r)
	}
	body, err := r.GetBody()
	if err != nil {
		return t.base.RoundTrip(r)
	}
	_ = r.Body.Close()
	r2 := *r
	r2.Body = body
	return t.base.RoundTrip(&r2)
}

// CloseIdleConnections closes the pool's idle connections
// (http.Client.CloseIdleConnections reaches it through this method).
func (t inMemoryBody) CloseIdleConnections() { t.base.CloseIdleConnections() }
