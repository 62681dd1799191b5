package llm

import (
	"time"

	"github.com/odin-code/odin/internal/metrics"
)

// The process's model traffic, for odin serve's /metrics: every attempt
// of every call of every client counts.
var (
	requestSeconds = metrics.NewHistogram("odin_model_request_seconds",
		"Duration of model requests (one attempt: sending to the end of the streamed response).", metrics.LatencyBuckets...)
	requestsFailed = metrics.NewCounter("odin_model_requests_failed_total",
		"Model requests that failed (an error, a cancelled or cut stream), retried or not.", "")
	tokens = metrics.NewCounter("odin_model_tokens_total",
		"Tokens of completed model requests as the provider reported them.", "kind")
)

func observeAttempt(d time.Duration, resp *Response, err error) {
	requestSeconds.Observe(d.Seconds())
	if err != nil || resp == nil {
		requestsFailed.Inc()
		return
	}
	u := resp.Usage
	tokens.Add("prompt", uint64(max(u.PromptTokens, 0)))
	tokens.Add("completion", uint64(max(u.CompletionTokens, 0)))
	tokens.Add("cached", uint64(max(u.CachedTokens, 0)))
}
