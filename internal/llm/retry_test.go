package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	return e
}

func TestRetrySucceeds(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ok := llmtest.Reply("recovered")
	tests := []struct {
		name      string
		faults    []llmtest.Step
		wantWaits []time.Duration
		wantKinds []llm.ErrorKind
	}{
		{
			name:      "429 with Retry-After in seconds",
			faults:    []llmtest.Step{{Status: 429, RetryAfter: "7"}},
			wantWaits: []time.Duration{7 * time.Second},
			wantKinds: []llm.ErrorKind{llm.KindRateLimit},
		},
		{
			name:      "429 with Retry-After as an HTTP date",
			faults:    []llmtest.Step{{Status: 429, RetryAfter: llmtest.FlexString(now.Add(30 * time.Second).Format(http.TimeFormat))}},
			wantWaits: []time.Duration{30 * time.Second},
			wantKinds: []llm.ErrorKind{llm.KindRateLimit},
		},
		{
			name:      "503 with retry-after-ms",
			faults:    []llmtest.Step{{Status: 503, Headers: map[string]string{"retry-after-ms": "1500"}}},
			wantWaits: []time.Duration{1500 * time.Millisecond},
			wantKinds: []llm.ErrorKind{llm.KindServer},
		},
		{
			name: "500s back off exponentially up to the cap",
			faults: []llmtest.Step{
				{Status: 500}, {Status: 502, Body: "<html>Bad gateway</html>"}, {Status: 500},
			},
			// base 1s, max 3s, no jitter: half of 1s, 2s, 3s (capped).
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond},
			wantKinds: []llm.ErrorKind{llm.KindServer, llm.KindServer, llm.KindServer},
		},
		{
			name:      "stream cut mid-way, then a whole response",
			faults:    []llmtest.Step{{Text: "partial output that must vanish", CutAfter: 3}},
			wantWaits: []time.Duration{500 * time.Millisecond},
			wantKinds: []llm.ErrorKind{llm.KindNetwork},
		},
		{
			name:      "error object mid-stream, then a whole response",
			faults:    []llmtest.Step{{Text: "partial output that must vanish", ErrorMidstream: true, CutAfter: 3}},
			wantWaits: []time.Duration{500 * time.Millisecond},
			wantKinds: []llm.ErrorKind{llm.KindServer},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", append(tt.faults, ok)...))
			c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
				o.BackoffBase, o.BackoffMax = time.Second, 3*time.Second
				o.Now = func() time.Time { return now }
			})
			var ev events
			got, err := c.Stream(t.Context(), userRequest("go"), ev.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.Text != "recovered" {
				t.Errorf("text = %q, want only the successful attempt's", got.Text)
			}
			if s := ev.textSince(llm.EventText); s != "recovered" {
				t.Errorf("text events after the last retry = %q", s)
			}
			if diff := cmp.Diff(tt.wantWaits, sl.waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			retries := ev.kinds(llm.EventRetry)
			var kinds []llm.ErrorKind
			for i, r := range retries {
				if r.Retry.Attempt != i+1 || r.Retry.Wait != tt.wantWaits[i].Milliseconds() {
					t.Errorf("retry %d = attempt %d wait %dms", i, r.Retry.Attempt, r.Retry.Wait)
				}
				kinds = append(kinds, asError(t, r.Retry.Err).Kind)
			}
			if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
				t.Errorf("retried error kinds (-want +got):\n%s", diff)
			}
			if n := len(srv.Requests()); n != len(tt.faults)+1 {
				t.Errorf("server saw %d requests, want %d", n, len(tt.faults)+1)
			}
		})
	}
}

func TestRetryJitterStaysInRange(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{Status: 500}, llmtest.Reply("ok")))
	var asked time.Duration
	c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
		o.BackoffBase = 2 * time.Second
		o.Jitter = func(d time.Duration) time.Duration { asked = d; return d - 1 }
	})
	if _, err := c.Stream(t.Context(), userRequest("go"), nil); err != nil {
		t.Fatal(err)
	}
	w := sl.waits()
	if len(w) != 1 || w[0] < time.Second || w[0] > 2*time.Second || asked == 0 {
		t.Fatalf("waits = %v (jitter asked for %v), want one wait within [1s, 2s]", w, asked)
	}
}

func TestRetryFails(t *testing.T) {
	ctxLen := &llmtest.ErrorBody{
		Message: "Input tokens exceed the configured limit of 272000 tokens. Please reduce the length of the messages.",
		Type:    "invalid_request_error", Param: "messages", Code: "context_length_exceeded",
	}
	tests := []struct {
		name         string
		steps        []llmtest.Step
		maxRetries   int
		wantKind     llm.ErrorKind
		wantStatus   int
		wantAttempts int
		wantText     string
	}{
		{
			name:     "context_length_exceeded by code is not retried",
			steps:    []llmtest.Step{{Status: 400, Error: ctxLen}},
			wantKind: llm.KindContextLength, wantStatus: 400, wantAttempts: 1, wantText: "context_length_exceeded",
		},
		{
			name: "context length by message text only",
			steps: []llmtest.Step{{Status: 400, Error: &llmtest.ErrorBody{
				Message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", Type: "BadRequestError"}}},
			wantKind: llm.KindContextLength, wantStatus: 400, wantAttempts: 1, wantText: "maximum context length",
		},
		{
			name:     "413 request too large",
			steps:    []llmtest.Step{{Status: 413}},
			wantKind: llm.KindContextLength, wantStatus: 413, wantAttempts: 1,
		},
		{
			name:     "401 is an auth error",
			steps:    []llmtest.Step{{Status: 401}},
			wantKind: llm.KindAuth, wantStatus: 401, wantAttempts: 1, wantText: "invalid_api_key",
		},
		{
			name:     "403 is an auth error",
			steps:    []llmtest.Step{{Status: 403}},
			wantKind: llm.KindAuth, wantStatus: 403, wantAttempts: 1,
		},
		{
			name:     "404 model not found",
			steps:    []llmtest.Step{{Status: 404, Error: &llmtest.ErrorBody{Message: "The model `nope` does not exist", Code: "model_not_found"}}},
			wantKind: llm.KindBadRequest, wantStatus: 404, wantAttempts: 1, wantText: "does not exist",
		},
		{
			name:     "429 insufficient_quota never clears by waiting",
			steps:    []llmtest.Step{{Status: 429, Error: &llmtest.ErrorBody{Message: "You exceeded your current quota", Type: "insufficient_quota", Code: "insufficient_quota"}}},
			wantKind: llm.KindBadRequest, wantStatus: 429, wantAttempts: 1, wantText: "quota",
		},
		{
			name:     "Retry-After beyond the limit is not waited for",
			steps:    []llmtest.Step{{Status: 429, RetryAfter: "3600"}},
			wantKind: llm.KindRateLimit, wantStatus: 429, wantAttempts: 1,
			wantText: "rate_limit_exceeded",
		},
		{
			name:       "stream cut on every attempt",
			steps:      []llmtest.Step{{Text: "abcdefghijkl", CutAfter: 2}, {Text: "abcdefghijkl", CutAfter: 2}, {Text: "abcdefghijkl", CutAfter: 2}},
			maxRetries: 2,
			wantKind:   llm.KindNetwork, wantAttempts: 3,
			wantText: "stream ended before the response finished",
		},
		{
			name:       "429 on every attempt",
			steps:      []llmtest.Step{{Status: 429, RetryAfter: "1"}, {Status: 429, RetryAfter: "1"}},
			maxRetries: 1,
			wantKind:   llm.KindRateLimit, wantStatus: 429, wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A success step follows, so that an unwanted retry would
			// succeed and be caught.
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", append(tt.steps, llmtest.Reply("should not be reached"))...))
			c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
				o.MaxRetries = tt.maxRetries
				if tt.wantAttempts == 1 {
					o.MaxRetries = 3 // a non-retryable error must stop anyway
				}
			})
			got, err := c.Stream(t.Context(), userRequest("go"), nil)
			if got != nil {
				t.Errorf("response = %+v, want nil", got)
			}
			e := asError(t, err)
			if e.Kind != tt.wantKind || e.StatusCode != tt.wantStatus || e.Attempts != tt.wantAttempts {
				t.Errorf("err = %v: kind %s status %d attempts %d, want %s %d %d", e, e.Kind, e.StatusCode, e.Attempts, tt.wantKind, tt.wantStatus, tt.wantAttempts)
			}
			if !strings.Contains(e.Error(), tt.wantText) || (tt.wantAttempts > 1 && !strings.HasSuffix(e.Error(), fmt.Sprintf("after %d attempts", tt.wantAttempts))) {
				t.Errorf("err = %q, want it to contain %q", e.Error(), tt.wantText)
			}
			if n := len(srv.Requests()); n != tt.wantAttempts {
				t.Errorf("server saw %d requests, want %d", n, tt.wantAttempts)
			}
			if n := len(sl.waits()); n != tt.wantAttempts-1 {
				t.Errorf("slept %d times, want %d", n, tt.wantAttempts-1)
			}
		})
	}
}

func TestRetryAfterOverLimitKeepsTheWait(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{Status: 429, RetryAfter: "600"}))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxRetryAfter = time.Minute })
	_, err := c.Stream(t.Context(), userRequest("go"), nil)
	if e := asError(t, err); e.RetryAfter != 10*time.Minute {
		t.Fatalf("RetryAfter = %v, want 10m so the caller can say when to come back", e.RetryAfter)
	}
}

func TestNetworkErrorIsRetried(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript())
	url := srv.URL()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	c, sl := newAdapter(t, url, func(o *llm.OpenAIOptions) { o.MaxRetries = 1 })
	_, err := c.Stream(t.Context(), userRequest("go"), nil)
	e := asError(t, err)
	if e.Kind != llm.KindNetwork || e.Attempts != 2 || len(sl.waits()) != 1 {
		t.Fatalf("err = %v (kind %s, attempts %d, waits %v), want network after 2 attempts", e, e.Kind, e.Attempts, sl.waits())
	}
}

// The next step ends the message: "after N attempts" used to follow it,
// so the advice read "...set OPENAI_BASE_URL to where it listens after 2
// attempts".
func TestNextStepEndsTheError(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript())
	url := srv.URL()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	c, _ := newAdapter(t, url, func(o *llm.OpenAIOptions) { o.MaxRetries = 1 })
	_, err := c.Stream(t.Context(), userRequest("go"), nil)
	e := asError(t, err)
	msg := e.Error()
	attempts, hint := strings.Index(msg, "after 2 attempts"), strings.Index(msg, "; nothing answers at")
	if attempts < 0 || hint < 0 || attempts > hint || !strings.HasSuffix(msg, "to where it listens") {
		t.Fatalf("err = %q, want the attempts before the next step, which ends it", msg)
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	tests := []struct {
		name string
		step llmtest.Step
	}{
		{"before the first byte", llmtest.Step{Text: "late", Latency: llmtest.Duration(time.Minute)}},
		{"while streaming", llmtest.Step{Text: "slow stream", ChunkSize: 1, ChunkDelay: llmtest.Duration(time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", tt.step, llmtest.Reply("on time")))
			c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.Timeout = 100 * time.Millisecond })
			var ev events
			got, err := c.Stream(t.Context(), userRequest("go"), ev.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.Text != "on time" || len(sl.waits()) != 1 {
				t.Fatalf("text %q after waits %v, want the retry's answer after one wait", got.Text, sl.waits())
			}
			if k := asError(t, ev.kinds(llm.EventRetry)[0].Retry.Err).Kind; k != llm.KindTimeout {
				t.Errorf("retried kind = %s, want timeout", k)
			}
		})
	}
}

// waitReturn fails the test if Stream has not returned within a generous
// bound: "at once" here means "without waiting for the backoff or the
// held response", which would take an hour.
func waitReturn(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
		return nil
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{Status: 500}, llmtest.Reply("never")))
	c, _ := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) {
		o.Sleep = nil // the real timer
		o.BackoffBase, o.BackoffMax = time.Hour, time.Hour
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, userRequest("go"), func(ev llm.Event) {
			if ev.Kind == llm.EventRetry {
				cancel()
			}
		})
		done <- err
	}()
	err := waitReturn(t, done)
	e := asError(t, err)
	if e.Kind != llm.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v (kind %s), want canceled wrapping context.Canceled", err, e.Kind)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestCancelWhileResponseHeld(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{Text: "too late", Hold: "model"}))
	c, _ := newAdapter(t, srv.URL())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, userRequest("go"), nil)
		done <- err
	}()
	if err := srv.WaitHeld(t.Context(), "model"); err != nil {
		t.Fatal(err)
	}
	cancel()
	err := waitReturn(t, done)
	if e := asError(t, err); e.Kind != llm.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v (kind %s), want canceled", err, e.Kind)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1 (no retry after cancel)", n)
	}
}

func TestCanceledBeforeStart(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Reply("x")))
	c, _ := newAdapter(t, srv.URL())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Stream(ctx, userRequest("go"), nil)
	if e := asError(t, err); e.Kind != llm.KindCanceled {
		t.Fatalf("kind = %s, want canceled", e.Kind)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestZeroRetriesMeansOneAttempt(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.NewScript().Add("default", llmtest.Step{Status: 500}, llmtest.Reply("not reached")))
	c, sl := newAdapter(t, srv.URL(), func(o *llm.OpenAIOptions) { o.MaxRetries = 0 })
	_, err := c.Stream(t.Context(), userRequest("go"), nil)
	if e := asError(t, err); e.Kind != llm.KindServer || e.Attempts != 1 || len(sl.waits()) != 0 {
		t.Fatalf("err = %v (attempts %d, waits %v), want one attempt", e, e.Attempts, sl.waits())
	}
}
