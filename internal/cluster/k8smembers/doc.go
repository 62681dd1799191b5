// Package k8smembers keeps an Odin cluster's members table in Kubernetes:
// one Lease (coordination.k8s.io/v1) per member, renewed at every
// heartbeat, so a fleet on Kubernetes needs no shared database for
// membership (sessions still need the shared store).
//
// The package is built only with the k8s build tag (make build-k8s):
// client-go never enters the default binary.
package k8smembers
