package cluster

import (
	"context"
	"time"

	"github.com/odin-code/odin/internal/metrics"
)

// The cluster's instruments, in the process-wide registry: odin serve's
// /metrics writes them, and so does a worker's --metrics listener.
var (
	activations = metrics.NewCounter("odin_activations_total",
		"Session grains activated on this node, by why: new (never claimed), failover (its owner died), rebalance (its owner lives; the topology moved it), reactivation (this node held it last: passivated, or fenced and claimed again).", "reason")
	failoverSeconds = metrics.NewHistogram("odin_failover_seconds",
		"From a dead owner's last heartbeat to the session's activation here (over-counts by up to one heartbeat interval).",
		.1, .25, .5, 1, 2, 3, 5, 10, 30)
	members = metrics.NewGauge("odin_members",
		"Members of the cluster this node sees alive (in the members table and with a live endpoint).")
	sessionsHosted = metrics.NewGauge("odin_sessions_active",
		"Session grains active on this node.")
	passivations = metrics.NewCounter("odin_sessions_passivated_total",
		"Session grains passivated on this node (idle).", "")
	requestSeconds = metrics.NewHistogram("odin_remote_request_seconds",
		"Requests from this node to session grains, retries included, until answered.",
		.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 15)
)

// Activation reasons (odin_activations_total's label).
const (
	ReasonNew          = "new"
	ReasonFailover     = "failover"
	ReasonRebalance    = "rebalance"
	ReasonReactivation = "reactivation"
)

// classify says why a session whose claim node previously held is being
// activated here, and for a failover how long ago the dead owner last beat.
func (n *Node) classify(ctx context.Context, previous string) (string, time.Duration) {
	switch {
	case previous == "":
		return ReasonNew, 0
	case previous == n.System.ID:
		return ReasonReactivation, 0
	case n.lookup.alive(previous):
		return ReasonRebalance, 0
	}
	rows, err := n.cfg.Store.Members(ctx, n.cfg.Name, time.Time{})
	if err != nil {
		return ReasonFailover, 0
	}
	for _, r := range rows {
		if r.ID == previous {
			return ReasonFailover, max(time.Since(r.Heartbeat), 0)
		}
	}
	// Its row is gone: it left (a graceful stop deletes it) or was pruned.
	return ReasonRebalance, 0
}
