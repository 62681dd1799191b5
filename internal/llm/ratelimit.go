package llm

import (
	"context"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a request and token quota per minute; 0 means no limit.
type RateLimit struct {
	RequestsPerMinute int
	TokensPerMinute   int
}

// RateLimits is a process's set of rate-limit buckets by key (a provider,
// or a provider's model with a quota of its own). Every client of a
// provider, in every session the process runs, draws from the bucket
// Bucket returns for the same key, which is what makes parallel agents
// queue instead of each discovering the quota by a 429. It is safe for
// concurrent use; the zero value is not: use NewRateLimits.
type RateLimits struct {
	mu      sync.Mutex
	buckets map[string]*Bucket
}

// NewRateLimits returns an empty set.
func NewRateLimits() *RateLimits { return &RateLimits{buckets: map[string]*Bucket{}} }

// Bucket returns the bucket of key, created with limit on first use. A
// later call with a different limit (a session whose config changed)
// updates it: the last configuration read wins.
func (r *RateLimits) Bucket(key string, limit RateLimit) *Bucket {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.buckets[key]
	if !ok {
		b = newBucket(limit)
		r.buckets[key] = b
		return b
	}
	b.setLimit(limit)
	return b
}

// Bucket is one shared quota: a token bucket of requests (burst 1, so
// that requests are spaced evenly rather than sent in a storm at the start
// of every minute), one of tokens, and a pause that a 429 sets for every
// caller. It is safe for concurrent use.
type Bucket struct {
	mu     sync.Mutex
	limit  RateLimit
	req    *rate.Limiter
	tok    *rate.Limiter
	paused time.Time // no request starts before this
}

func newBucket(l RateLimit) *Bucket {
	b := &Bucket{}
	b.set(l)
	return b
}

func (b *Bucket) setLimit(l RateLimit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l != b.limit {
		b.set(l)
	}
}

// set replaces the limiters, full: a changed quota starts afresh. b.mu is
// held or b is not shared yet.
func (b *Bucket) set(l RateLimit) {
	b.limit = l
	perMinute := func(n int) rate.Limit {
		if n <= 0 {
			return rate.Inf
		}
		return rate.Limit(float64(n) / 60)
	}
	b.req = rate.NewLimiter(perMinute(l.RequestsPerMinute), 1)
	b.tok = rate.NewLimiter(perMinute(l.TokensPerMinute), max(l.TokensPerMinute, 1))
}

// Limit is the bucket's current quota.
func (b *Bucket) Limit() RateLimit {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Pause holds every caller of Wait until now+d: the provider said (by a
// 429, with or without Retry-After) that its quota is spent for everyone.
// A shorter pause never shortens a longer one.
func (b *Bucket) Pause(d time.Duration) {
	until := time.Now().Add(d)
	b.mu.Lock()
	defer b.mu.Unlock()
	if until.After(b.paused) {
		b.paused = until
	}
}

// Wait blocks until a request of about tokens tokens may start: after any
// pause, and when both its request and its tokens fit the quota. A wait
// is announced first with onWait (which may be nil). A request larger than
// the whole token quota waits for a full minute's worth, not forever. It
// returns ctx's error if ctx ends first; the quota it reserved is then
// given back.
func (b *Bucket) Wait(ctx context.Context, tokens int, onWait func(time.Duration)) error {
	for {
		if err := b.waitPause(ctx, onWait); err != nil {
			return err
		}
		now := time.Now()
		b.mu.Lock()
		rr := b.req.ReserveN(now, 1)
		tr := b.tok.ReserveN(now, min(max(tokens, 1), b.tok.Burst()))
		b.mu.Unlock()
		d := max(rr.DelayFrom(now), tr.DelayFrom(now))
		if d > 0 {
			if onWait != nil {
				onWait(d)
			}
			if err := sleep(ctx, d); err != nil {
				rr.Cancel()
				tr.Cancel()
				return err
			}
		}
		// A 429 that arrived while this request waited for its turn holds
		// it as well, and it queues again after the pause: the requests
		// whose turns fell within the pause must not all start when it
		// ends.
		if !b.isPaused() {
			return nil
		}
	}
}

func (b *Bucket) isPaused() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Now().Before(b.paused)
}

func (b *Bucket) waitPause(ctx context.Context, onWait func(time.Duration)) error {
	for {
		b.mu.Lock()
		d := time.Until(b.paused)
		b.mu.Unlock()
		if d <= 0 {
			return ctx.Err()
		}
		if onWait != nil {
			onWait(d)
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Limiter picks the bucket a request draws from: its model's own, if the
// model has a quota of its own, else the provider's. A nil *Limiter lets
// every request go at once and ignores 429s beyond the caller's retry.
type Limiter struct {
	provider *Bucket
	models   map[string]*Bucket // by lower-case model id
}

// NewLimiter returns a limiter drawing from provider, and from models (by
// model id, matched ignoring case) for the models listed there.
func NewLimiter(provider *Bucket, models map[string]*Bucket) *Limiter {
	l := &Limiter{provider: provider, models: map[string]*Bucket{}}
	for id, b := range models {
		l.models[strings.ToLower(id)] = b
	}
	return l
}

// For returns the bucket of model.
func (l *Limiter) For(model string) *Bucket {
	if b, ok := l.models[strings.ToLower(model)]; ok {
		return b
	}
	return l.provider
}

// RateWaitInfo describes a wait for the provider's quota.
type RateWaitInfo struct {
	Wait     int64  // milliseconds until the request may start
	Provider string // the provider's name in config
}

// requestTokens is what a request counts against a token quota: the
// estimated prompt and tools plus the completion cap.
func requestTokens(req *Request) int {
	return int(EstimateMessages(req.Messages) + EstimateTools(req.Tools) + int64(max(req.MaxTokens, 0)))
}

// rateWait waits for req's turn in the limiter, if any, announcing a wait
// of at least a second with an EventRateLimit: shorter ones are the even
// spacing of requests, not news.
func (c *OpenAI) rateWait(ctx context.Context, req *Request, onEvent func(Event)) error {
	if c.opts.Limiter == nil {
		return nil
	}
	return c.opts.Limiter.For(req.Model).Wait(ctx, requestTokens(req), func(d time.Duration) {
		if d >= time.Second {
			onEvent(Event{Kind: EventRateLimit, RateWait: &RateWaitInfo{Wait: d.Milliseconds(), Provider: c.opts.Provider}})
		}
	})
}

// ratePause pauses req's bucket for wait after a 429, so that every agent
// of the provider holds off, not only the one that got it.
func (c *OpenAI) ratePause(req *Request, e *Error, wait time.Duration) {
	if c.opts.Limiter == nil || e.Kind != KindRateLimit {
		return
	}
	c.opts.Limiter.For(req.Model).Pause(wait)
}
