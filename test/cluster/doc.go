// Package cluster tests an Odin cluster through the built binary: odin
// serve --cluster as the front and odin worker nodes, as child processes
// on 127.0.0.1 sharing one store, reaped by PID (issue 29).
package cluster
