//go:build cluster && !k8s

package main

import (
	"errors"

	"github.com/odin-code/odin/internal/store"
)

// kubernetesMembership: this build has no Kubernetes client (client-go
// stays out of the default binary).
func kubernetesMembership(string) (store.Membership, error) {
	return nil, errors.New("--membership kubernetes: this odin was built without Kubernetes support; build it with `make build-k8s` (go build -tags cluster,k8s ./cmd/odin)")
}
