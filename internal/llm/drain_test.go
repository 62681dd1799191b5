package llm_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
)

const doneStream = "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// countingServer serves doneStream and counts the connections it accepted.
// The body's chunked terminator follows [DONE] in a later write, as it
// does from a provider whose proxy flushes each event; hold, when set,
// keeps each response open after [DONE] until the client goes away or the
// test ends.
func countingServer(t *testing.T, hold bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	stop := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, doneStream)
		w.(http.Flusher).Flush()
		if !hold {
			time.Sleep(20 * time.Millisecond)
			return
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(func() { close(stop); srv.Close() })
	return srv, &conns
}

// TestConnectionReusedAfterDone: a stream ends at [DONE] but its body
// still holds the chunked terminator; unless the client reads it, Go's
// transport closes the connection, and every model call dials again.
func TestConnectionReusedAfterDone(t *testing.T) {
	srv, conns := countingServer(t, false)
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, HTTPClient: srv.Client()})
	for i := range 5 {
		resp, err := c.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}, nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Text != "hi" {
			t.Fatalf("call %d: text %q, want hi", i, resp.Text)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("5 sequential calls opened %d connections, want 1 reused", got)
	}
}

// TestStreamOpenAfterDoneDoesNotHang: a server that keeps the stream
// open after [DONE] must not hold the call until the idle timeout; the
// answer it sent stands.
func TestStreamOpenAfterDoneDoesNotHang(t *testing.T) {
	srv, _ := countingServer(t, true)
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, HTTPClient: srv.Client(), IdleTimeout: time.Hour, Timeout: time.Hour})
	type result struct {
		resp *llm.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Stream(t.Context(), llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}, nil)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("stream: %v", r.err)
		}
		if r.resp.Text != "hi" {
			t.Fatalf("text %q, want hi", r.resp.Text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call still waits on a stream held open after [DONE]")
	}
}
