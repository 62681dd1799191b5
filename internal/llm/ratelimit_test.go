package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/odin-code/odin/internal/llm"
	"github.com/odin-code/odin/internal/llm/llmtest"
)

// fanOut sends n concurrent requests through clients (round robin, as the
// agents of several sessions would) and returns how many failed.
func fanOut(t *testing.T, n int, clients ...*llm.OpenAI) int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i%len(clients)]
			_, err := c.Stream(t.Context(), llm.Request{Model: "m", Agent: fmt.Sprintf("agent-%d", i),
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}}, nil)
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
				t.Logf("request %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	return failed
}

func quotaServer(t *testing.T, n int) *llmtest.Server {
	t.Helper()
	script := llmtest.NewScript()
	for range n {
		script.Add(llmtest.DefaultAgent, llmtest.Reply("done"))
	}
	srv, err := llmtest.Serve("127.0.0.1:0", script, llmtest.WithRateLimit(10, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func quotaClient(t *testing.T, url string, lim *llm.Limiter, retries int) *llm.OpenAI {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return llm.NewOpenAI(llm.OpenAIOptions{BaseURL: url, Provider: "scripted", MaxRetries: retries,
		BackoffBase: 200 * time.Millisecond, HTTPClient: &http.Client{Transport: tr}, Limiter: lim})
}

// TestSharedQuotaSixtyFourAgents is the scenario: 64 agents at
// once against a provider that answers 429 above 10 requests per second.
// With the shared limiter (9 a second, drawn by two clients as two
// sessions of `odin serve` would) they queue and nearly none is refused;
// without it, most of the first wave is.
func TestSharedQuotaSixtyFourAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 128 requests at 10 a second")
	}
	const agents = 64

	srv := quotaServer(t, agents)
	limits := llm.NewRateLimits()
	bucket := func() *llm.Limiter {
		return llm.NewLimiter(limits.Bucket("scripted", llm.RateLimit{RequestsPerMinute: 540}), nil)
	}
	failed := fanOut(t, agents, quotaClient(t, srv.URL(), bucket(), 4), quotaClient(t, srv.URL(), bucket(), 4))
	with := srv.RateLimited()
	t.Logf("with the shared limiter: %d requests answered 429, %d calls failed", with, failed)
	if failed != 0 {
		t.Errorf("%d calls failed with the limiter", failed)
	}
	if with > 5 {
		t.Errorf("%d requests answered 429 with the limiter, want at most a handful", with)
	}

	bare := quotaServer(t, agents)
	failed = fanOut(t, agents, quotaClient(t, bare.URL(), nil, 10))
	without := bare.RateLimited()
	t.Logf("without a limiter: %d requests answered 429, %d calls failed", without, failed)
	if without < agents-10 {
		t.Errorf("without a limiter only %d requests were refused: the server's quota is not enforced", without)
	}

	// A quota set above the provider's (15 a second against 10): the 429s
	// pause every agent at once, so far fewer are refused than with none.
	over := quotaServer(t, agents)
	overLim := llm.NewLimiter(llm.NewRateLimits().Bucket("over", llm.RateLimit{RequestsPerMinute: 900}), nil)
	failed = fanOut(t, agents, quotaClient(t, over.URL(), overLim, 10))
	above := over.RateLimited()
	t.Logf("with a limit above the server's: %d requests answered 429, %d calls failed", above, failed)
	if failed != 0 || above >= without {
		t.Errorf("limit above the server's: %d refused, %d failed; want fewer refusals than %d and no failure", above, failed, without)
	}
}

// TestRateLimitPausesEveryAgent: one agent's 429 with Retry-After holds
// another agent of the same provider before it sends anything.
func TestRateLimitPausesEveryAgent(t *testing.T) {
	script := llmtest.NewScript().Add(llmtest.DefaultAgent,
		llmtest.Step{Status: 429, RetryAfter: "30"}, llmtest.Reply("late"))
	srv, err := llmtest.Serve("127.0.0.1:0", script)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	limits := llm.NewRateLimits()
	lim := llm.NewLimiter(limits.Bucket("scripted", llm.RateLimit{}), nil)
	a := quotaClient(t, srv.URL(), lim, 4)
	b := quotaClient(t, srv.URL(), lim, 4)

	actx, cancelA := context.WithCancel(t.Context())
	retried := make(chan struct{})
	doneA := make(chan error, 1)
	go func() {
		var once sync.Once
		_, err := a.Stream(actx, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "a"}}}, func(ev llm.Event) {
			if ev.Kind == llm.EventRetry {
				once.Do(func() { close(retried) })
			}
		})
		doneA <- err
	}()
	<-retried

	bctx, cancelB := context.WithCancel(t.Context())
	var waited *llm.RateWaitInfo
	_, err = b.Stream(bctx, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "b"}}}, func(ev llm.Event) {
		if ev.Kind == llm.EventRateLimit && waited == nil {
			waited = ev.RateWait
			cancelB()
		}
	})
	cancelA()
	if e := asError(t, err); e.Kind != llm.KindCanceled {
		t.Errorf("b: %v, want canceled while paused", err)
	}
	if errA := <-doneA; errA == nil {
		t.Errorf("a finished although cancelled during the pause")
	}
	if waited == nil {
		t.Fatal("b announced no wait for the rate limit")
	}
	if waited.Provider != "scripted" || waited.Wait < (20*time.Second).Milliseconds() || waited.Wait > (30*time.Second).Milliseconds() {
		t.Errorf("b's wait = %+v, want about 30s for provider scripted", *waited)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want only a's first: b must wait for the pause", n)
	}
}

func TestBucketQuota(t *testing.T) {
	limits := llm.NewRateLimits()
	b := limits.Bucket("p", llm.RateLimit{RequestsPerMinute: 60, TokensPerMinute: 1000})
	if got := limits.Bucket("p", llm.RateLimit{RequestsPerMinute: 60, TokensPerMinute: 1000}); got != b {
		t.Fatal("the same key gave two buckets: agents would not share the quota")
	}
	// The first request goes at once; the second waits its turn (one a
	// second), and a cancelled wait gives its reservation back.
	if err := b.Wait(t.Context(), 10, func(d time.Duration) { t.Errorf("first request waited %s", d) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var announced time.Duration
	err := b.Wait(ctx, 10, func(d time.Duration) { announced = d; cancel() })
	if !errors.Is(err, context.Canceled) || announced <= 0 || announced > time.Second {
		t.Errorf("second request: err %v, announced %s; want a wait of at most 1s, cancelled", err, announced)
	}

	// A request larger than the token quota still gets a turn.
	big := limits.Bucket("big", llm.RateLimit{TokensPerMinute: 100})
	if err := big.Wait(t.Context(), 5000, nil); err != nil {
		t.Fatalf("oversized request: %v", err)
	}

	// The last configuration read wins.
	limits.Bucket("p", llm.RateLimit{RequestsPerMinute: 120})
	if got := b.Limit(); got.RequestsPerMinute != 120 || got.TokensPerMinute != 0 {
		t.Errorf("limit after update = %+v", got)
	}

	// A pause holds every caller; a shorter one does not shorten it.
	b.Pause(time.Hour)
	b.Pause(time.Second)
	ctx, cancel = context.WithCancel(t.Context())
	err = b.Wait(ctx, 1, func(d time.Duration) { announced = d; cancel() })
	if !errors.Is(err, context.Canceled) || announced < 59*time.Minute {
		t.Errorf("paused: err %v, announced %s; want an hour's wait", err, announced)
	}
}

func TestLimiterPerModel(t *testing.T) {
	limits := llm.NewRateLimits()
	prov := limits.Bucket("p", llm.RateLimit{RequestsPerMinute: 100})
	own := limits.Bucket("p/slow", llm.RateLimit{RequestsPerMinute: 5})
	lim := llm.NewLimiter(prov, map[string]*llm.Bucket{"Slow": own})
	if lim.For("slow") != own || lim.For("SLOW") != own {
		t.Error("a model with its own quota does not draw from it")
	}
	if lim.For("fast") != prov {
		t.Error("a model without its own quota does not draw from the provider's")
	}
}
