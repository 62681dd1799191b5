//go:build cluster && k8s

package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/odin-code/odin/internal/cluster/k8smembers"
	"github.com/odin-code/odin/internal/store"
)

// kubernetesMembership keeps the members in Leases of namespace: inside a
// pod through its service account, elsewhere through $KUBECONFIG.
func kubernetesMembership(namespace string) (store.Membership, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		path := os.Getenv("KUBECONFIG")
		if path == "" {
			return nil, fmt.Errorf("--membership kubernetes: not in a pod (%v) and KUBECONFIG is not set", err)
		}
		if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
			return nil, fmt.Errorf("--membership kubernetes: KUBECONFIG %s: %w", path, err)
		}
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("--membership kubernetes: %w", err)
	}
	if namespace == "" {
		namespace = os.Getenv("POD_NAMESPACE")
	}
	if namespace == "" {
		b, _ := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		namespace = strings.TrimSpace(string(b))
	}
	return &k8smembers.Leases{Client: client, Namespace: cmp.Or(namespace, "default")}, nil
}
