package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm/llmtest"
)

// token is one chunk of the scripted reply: unique, so each can be
// followed from the model to the SSE client.
var token = regexp.MustCompile(`w[0-9]{4}`)

// stampedBody notes when each token of a model response passes through
// the proxy on its way to the worker.
type stampedBody struct {
	io.ReadCloser
	mu   *sync.Mutex
	seen map[string]time.Time
	tail []byte // a token split over two reads
}

func (b *stampedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		now := time.Now()
		buf := append(b.tail, p[:n]...)
		b.mu.Lock()
		for _, t := range token.FindAll(buf, -1) {
			if _, ok := b.seen[string(t)]; !ok {
				b.seen[string(t)] = now
			}
		}
		b.mu.Unlock()
		b.tail = append([]byte(nil), buf[max(0, len(buf)-5):]...)
	}
	return n, err
}

// BenchmarkSSEText: the worker's session streams a reply of 200 unique
// tokens (one per 20 ms chunk) from the scripted model; a proxy between
// worker and model notes when each token leaves for the worker, and the
// SSE client of odin serve (the front, another process) when its
// text_delta arrives. Reported: the latency of streamed text from model
// to SSE client across the cluster (p50, p99, max in ms; issue 29 asks
// within 50 ms). go test -run - -bench SSEText -benchtime 1x ./test/cluster
func BenchmarkSSEText(b *testing.B) {
	const tokens = 200
	var text strings.Builder
	for i := range tokens {
		fmt.Fprintf(&text, "w%04d ", i)
	}
	script := llmtest.NewScript()
	for range b.N {
		script.Add("orchestrator", llmtest.Step{When: "stream", ChunkDelay: llmtest.Duration(20 * time.Millisecond), ChunkSize: 6, Text: text.String()})
	}
	f := newFleet(b, script, "")
	var mu sync.Mutex
	seen := map[string]time.Time{}
	target, _ := url.Parse(f.model.URL())
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host}) },
		FlushInterval: -1,
		ModifyResponse: func(r *http.Response) error {
			r.Body = &stampedBody{ReadCloser: r.Body, mu: &mu, seen: seen}
			return nil
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: proxy}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { srv.Close() })
	// The worker asks the model through the proxy (the last value of a
	// variable in a process's environment wins).
	f.env = append(f.env, "OPENAI_BASE_URL=http://"+ln.Addr().String()+target.Path)
	f.worker("worker-1")
	fr := f.front()
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		mu.Lock()
		clear(seen)
		mu.Unlock()
		code, s, err := fr.call("POST", "/v1/sessions", map[string]string{"project": f.project})
		if err != nil || code != http.StatusCreated {
			b.Fatalf("create session: %d %v %v", code, s, err)
		}
		id := s["id"].(string)
		evs, err := fr.events(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if code, out, err := fr.call("POST", "/v1/sessions/"+id+"/messages", map[string]string{"body": "stream"}); err != nil || code != http.StatusAccepted {
			b.Fatalf("message: %d %v %v", code, out, err)
		}
		arrived := map[string]time.Time{}
		for done := false; !done; {
			select {
			case ev, ok := <-evs:
				if !ok {
					b.Fatal("the event stream ended")
				}
				switch ev.typ {
				case "text_delta":
					now := time.Now()
					t, _ := ev.data["text"].(string)
					for _, tok := range token.FindAllString(t, -1) {
						if _, ok := arrived[tok]; !ok {
							arrived[tok] = now
						}
					}
				case "turn_finished":
					done = true
				}
			case <-ctx.Done():
				b.Fatal("the turn never finished")
			}
		}
		mu.Lock()
		for tok, at := range arrived {
			if sent, ok := seen[tok]; ok {
				lat = append(lat, at.Sub(sent))
			}
		}
		mu.Unlock()
		if len(arrived) != tokens {
			b.Fatalf("%d of %d tokens reached the SSE client", len(arrived), tokens)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(lat[len(lat)/2]), "sse-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "sse-p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "sse-max-ms")
}
