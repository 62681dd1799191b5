package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestGoesOutInOneWrite: a specialist's request of a few KiB
// leaves a provider connection of the shared pool in one write, headers
// and body together (openai-go's body wrapper made net/http write the
// headers alone, then copy the body through a fresh buffer); one larger
// than the write buffer still arrives whole.
func TestRequestGoesOutInOneWrite(t *testing.T) {
	var got atomic.Value // the last request's body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	pool, ok := sharedPool(DefaultIdleConnTimeout).(inMemoryBody)
	if !ok {
		t.Skip("http.DefaultTransport is not an *http.Transport: the shared pool is that transport")
	}
	tr := pool.base.Clone()
	t.Cleanup(tr.CloseIdleConnections)
	var writes atomic.Int32
	dial := (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	c := NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1", HTTPClient: &http.Client{Transport: inMemoryBody{tr}}, MaxRetries: -1})
	for i, size := range []int{12 << 10, 3 * writeBufferSize} {
		writes.Store(0)
		brief := strings.Repeat("find the thing. ", size/16)
		req := Request{Model: "m", Agent: "search", Messages: []Message{{Role: RoleSystem, Content: "You search."}, {Role: RoleUser, Content: brief}}}
		if _, err := c.Stream(t.Context(), req, nil); err != nil {
			t.Fatal(err)
		}
		if body, _ := got.Load().(string); !strings.Contains(body, brief) {
			t.Fatalf("request %d of %d KiB did not arrive whole", i, size>>10)
		}
		if n := writes.Load(); i == 0 && n != 1 {
			t.Errorf("a request of %d KiB took %d writes, want 1", size>>10, n)
		}
	}
}
