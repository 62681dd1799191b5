package llm_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sleeps records the waits the adapter asked for and returns at once (or
// with ctx's error), so retry tests take no wall time.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newAdapter returns an adapter for baseURL whose sleeps are recorded and
// whose connections are closed when the test ends.
func newAdapter(t *testing.T, baseURL string, edit ...func(*llm.OpenAIOptions)) (*llm.OpenAI, *sleeps) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sl := &sleeps{}
	opts := llm.OpenAIOptions{
		BaseURL:    baseURL,
		APIKey:     "test-key",
		MaxRetries: llm.DefaultMaxRetries,
		HTTPClient: &http.Client{Transport: tr},
		Sleep:      sl.sleep,
		Jitter:     func(time.Duration) time.Duration { return 0 },
	}
	for _, e := range edit {
		e(&opts)
	}
	return llm.NewOpenAI(opts), sl
}

// events collects what Stream emitted.
type events struct {
	mu  sync.Mutex
	all []llm.Event
}

func (e *events) add(ev llm.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) kinds(k llm.EventKind) []llm.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []llm.Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// textSince concatenates the deltas of kind k emitted after the last retry,
// as a consumer following the Client contract would.
func (e *events) textSince(k llm.EventKind) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := ""
	for _, ev := range e.all {
		switch ev.Kind {
		case llm.EventRetry:
			s = ""
		case k:
			s += ev.Text
		}
	}
	return s
}

func userRequest(text string) llm.Request {
	return llm.Request{Model: "test-model", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}
