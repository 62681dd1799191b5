package main

import (
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// clusterFlags are the flags odin worker and odin serve --cluster share
// (issue 29).
type clusterFlags struct {
	name              string
	advertise         string
	bind              string
	port              int
	ttl               time.Duration
	activationTimeout time.Duration
	idle              time.Duration
	// hostSessions is serve's --host-sessions; a worker always hosts.
	hostSessions bool
	// metrics is a worker's --metrics listen address ("" for none).
	metrics string
	// tlsCert, tlsKey, tlsCA: the wire's mutual TLS (all or none).
	tlsCert, tlsKey, tlsCA string
	// membership is where members are kept: "store" (the --store's
	// members table) or "kubernetes" (Leases; a -tags k8s build).
	membership, k8sNamespace string
}

func (f *clusterFlags) register(fl *pflag.FlagSet, serveCmd bool) {
	fl.StringVar(&f.name, "cluster", "", "join the Odin cluster of this `NAME` (nodes sharing one --store)")
	fl.StringVar(&f.advertise, "advertise", "127.0.0.1", "`HOST` other nodes reach this node at (beyond loopback only with --cluster-tls-*)")
	fl.StringVar(&f.bind, "cluster-bind", "", "`HOST` the cluster wire listens on (default: the --advertise host; 0.0.0.0 in a container)")
	fl.StringVar(&f.tlsCert, "cluster-tls-cert", "", "this node's certificate for the cluster wire (PEM; must name the --advertise host)")
	fl.StringVar(&f.tlsKey, "cluster-tls-key", "", "the key of --cluster-tls-cert (PEM)")
	fl.StringVar(&f.tlsCA, "cluster-ca", "", "the cluster's CA (PEM): peers must present a certificate it signed")
	fl.IntVar(&f.port, "cluster-port", 0, "port of the cluster wire (0: any free port)")
	fl.DurationVar(&f.ttl, "cluster-ttl", 3*time.Second, "a node whose heartbeat is older than this leaves the cluster")
	fl.DurationVar(&f.activationTimeout, "activation-timeout", 5*time.Second, "how long to wait for a node to activate a session")
	fl.StringVar(&f.membership, "membership", "store", "where the cluster's members are kept: store (the --store's members table) or kubernetes (Leases in --k8s-namespace; needs a build with -tags cluster,k8s)")
	fl.StringVar(&f.k8sNamespace, "k8s-namespace", "", "with --membership kubernetes: the namespace of the Leases (default: $POD_NAMESPACE, else the pod's service account namespace)")
	if serveCmd {
		fl.BoolVar(&f.hostSessions, "host-sessions", true, "with --cluster: run sessions on this node too (false: the HTTP front only)")
	} else {
		fl.DurationVar(&f.idle, "idle", 10*time.Minute, "passivate a session idle for this long")
		fl.StringVar(&f.metrics, "metrics", "", "serve GET /metrics (Prometheus text) on this loopback `HOST:PORT` (port 0: any free one)")
	}
}

// check applies serve --listen's rule to the cluster wire: traffic beyond
// loopback needs TLS, which the wire does not have yet, so a non-loopback
// --advertise is refused rather than sending transcripts in the clear.
func (f *clusterFlags) check() error {
	if strings.TrimSpace(f.name) == "" {
		return usageError("--cluster NAME is required")
	}
	tlsSet := 0
	for _, v := range []string{f.tlsCert, f.tlsKey, f.tlsCA} {
		if v != "" {
			tlsSet++
		}
	}
	if tlsSet != 0 && tlsSet != 3 {
		return usageError("--cluster-tls-cert, --cluster-tls-key and --cluster-ca go together")
	}
	if (!isLoopback(f.advertise) || (f.bind != "" && !isLoopback(f.bind))) && tlsSet == 0 {
		return usageError("--advertise %s is not a loopback address: give --cluster-tls-cert, --cluster-tls-key and --cluster-ca (the wire carries transcripts; plaintext is for loopback only)", f.advertise)
	}
	if f.metrics != "" {
		host, _, err := net.SplitHostPort(f.metrics)
		if err != nil {
			return usageError("--metrics %q: want HOST:PORT: %v", f.metrics, err)
		}
		if !isLoopback(host) {
			// The listener has no token: what it tells (sessions, members,
			// activity) stays on the machine, as the wire does.
			return usageError("--metrics %s is not a loopback address: the metrics listener has no authentication", f.metrics)
		}
	}
	if f.membership != "store" && f.membership != "kubernetes" {
		return usageError("--membership %q: want store or kubernetes", f.membership)
	}
	if f.port < 0 || f.port > 65535 {
		return usageError("--cluster-port %d: want 0-65535", f.port)
	}
	if f.ttl < 100*time.Millisecond {
		return usageError("--cluster-ttl %s: want at least 100ms", f.ttl)
	}
	return nil
}

func newWorkerCmd(g *globalFlags, stdout, stderr io.Writer) *cobra.Command {
	f := &clusterFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Host sessions for an Odin cluster (odin serve --cluster is its front)",
		Long: `Join the Odin cluster NAME and host its sessions: each session runs on the
node that rendezvous hashing of its ID picks among the nodes hosting
sessions; a node that dies leaves the cluster and its sessions are taken
over by the others (each claim bumps the session's epoch in the store, so
the lost node's writes are refused).

Cluster support is built in with -tags cluster (go build -tags cluster
./cmd/odin): it links gRPC, which keeps the default binary from dropping
unused code (see docs/cluster.md). Every node of a cluster shares one --store: a SQLite file when all run on
one machine, PostgreSQL for several. Membership is a table in that store
(a heartbeat every --cluster-ttl/5). The cluster wire is gRPC: plaintext
on loopback; beyond it, mutual TLS (--cluster-tls-cert, --cluster-tls-key,
--cluster-ca on every node). See docs/cluster.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			return runWorker(g, f, stdout, stderr)
		},
	}
	f.register(cmd.Flags(), false)
	cmd.Flags().StringVar(&g.store, "store", "", "the cluster's session store: a SQLite file, sqlite:///abs/path or postgres://… (store.url)")
	return cmd
}
