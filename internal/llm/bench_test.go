package llm_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// BenchmarkStreamScripted measures one model turn end to end over loopback
// HTTP: request encoding, SSE parsing and accumulation of ~1 KB of text in
// 16-rune deltas plus two tool calls.
func BenchmarkStreamScripted(b *testing.B) {
	step := llmtest.Step{
		Text:      strings.Repeat("All work and no play. ", 48),
		ChunkSize: 16,
		ToolCalls: []llmtest.ToolCall{
			llmtest.Call("ReadFile", map[string]string{"path": "internal/llm/openai.go"}),
			llmtest.Call("Grep", map[string]string{"pattern": "func .*Stream", "path": "."}),
		},
	}
	script := llmtest.NewScript()
	for range b.N {
		script.Add("default", step)
	}
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL(), MaxRetries: -1})
	req := userRequest("read the adapter")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Stream(b.Context(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamFixture measures parsing a recorded-shape stream served
// as fast as possible (no script bookkeeping).
func BenchmarkStreamFixture(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "openai-parallel-split.sse"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, MaxRetries: -1})
	req := userRequest("hi")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Stream(b.Context(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamFanOutCalls measures the Orchestrator's side of a fan-out:
// one response streaming 256 agent calls in 64-character chunks, as
// actors' BenchmarkFanOut scripts it (server and client share the CPU).
func BenchmarkStreamFanOutCalls(b *testing.B) {
	var calls []llmtest.ToolCall
	for i := range 256 {
		calls = append(calls, llmtest.Call("agent", map[string]any{"agent": "search", "description": fmt.Sprintf("task %d", i), "prompt": fmt.Sprintf("find thing %d", i)}))
	}
	script := llmtest.NewScript()
	for range b.N {
		script.Add("default", llmtest.Step{ToolCalls: calls, ChunkSize: 64})
	}
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL(), MaxRetries: -1})
	req := userRequest("fan out")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		resp, err := c.Stream(b.Context(), req, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.ToolCalls) != 256 {
			b.Fatalf("%d calls", len(resp.ToolCalls))
		}
	}
}

// BenchmarkStreamTLSFlushedDone measures sequential model calls to a TLS
// server that flushes [DONE] before the body's end, as a provider behind
// a proxy that flushes each event does; conns/op is how many connections
// each call opened (1 when every call dials and handshakes again).
func BenchmarkStreamTLSFlushedDone(b *testing.B) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(doneStream))
		w.(http.Flusher).Flush()
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	c := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: srv.URL, HTTPClient: srv.Client(), MaxRetries: -1})
	req := userRequest("hi")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Stream(b.Context(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(conns.Load())/float64(b.N), "conns/op")
}
