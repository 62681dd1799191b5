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
	}
	// This node's view of the members can lag the front's by a beat: the
	// front, having dropped a stopped owner, sends the request here before
	// this node's own read drops it. The owner's row decides: a heartbeat
	// older than the TTL is a failover, whatever the view says.
	alive := n.lookup.alive(previous)
	rows, err := n.cfg.Store.Members(ctx, n.cfg.Name, time.Time{})
	if err != nil {
		if alive {
			return ReasonRebalance, 0
		}
		return ReasonFailover, 0
	}
	for _, r := range rows {
		if r.ID == previous {
			age := max(time.Since(r.Heartbeat), 0)
			if alive && age < n.cfg.TTL {
				return ReasonRebalance, 0
			}
			return ReasonFailover, age
		}
	}
	// Its row is gone: it left (a graceful stop deletes it) or was pruned.
	return ReasonRebalance, 0
}
