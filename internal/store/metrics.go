package store

import (
	"time"

	"github.com/odin-code/odin/internal/metrics"
)

// Write transactions of every store of the process, for odin serve's
// /metrics. A session's journal commits its queued writes in one of
// them, so their latency is the journal's write latency.
var (
	writeSeconds = metrics.NewHistogram("odin_store_write_seconds",
		"Duration of store write transactions (begin to commit), the session journals' batches included.", metrics.LatencyBuckets...)
	writeErrors = metrics.NewCounter("odin_store_write_errors_total",
		"Store write transactions that failed (rolled back, or the commit failed).", "")
	fencedWrites = metrics.NewCounter("odin_fenced_writes_total",
		"Writes refused because a later claim owns their session (a node that lost it kept writing).", "")
)

func observeWrite(d time.Duration, err error) {
	writeSeconds.Observe(d.Seconds())
	if err != nil {
		writeErrors.Inc()
	}
}
