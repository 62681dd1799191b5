// Package cluster runs Odin's sessions as grains of a protoactor-go
// cluster (issue 29): a node (odin serve --cluster, odin worker) joins
// through a members table in the shared store (Provider), places each
// session on one node with Odin's own rendezvous lookup (Lookup), hosts
// the kind "session" (a grain that claims the session's epoch in the
// store, wraps today's session and passivates when idle), and talks to
// other nodes with one envelope message (JSON inside a protobuf Any, see
// Encode) whose kinds are registered in this package.
//
// This package is the one place besides actors that imports protoactor's
// cluster and remote: the session itself knows nothing of nodes.
package cluster
