//go:build k8s

package k8smembers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/odin-code/odin/internal/store"
)

func TestLeasesAreTheMembersTable(t *testing.T) {
	ctx := t.Context()
	client := fake.NewClientset()
	l := &Leases{Client: client, Namespace: "odin"}
	t0 := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	a := store.Member{Cluster: "prod fleet/EU", ID: "Node_A", Host: "10.0.0.1", Port: 7000, Kinds: []string{"session"}, Heartbeat: t0}
	b := store.Member{Cluster: "prod fleet/EU", ID: "node-b", Host: "10.0.0.2", Port: 7001, Kinds: []string{"session", "specialist"}, Heartbeat: t0.Add(time.Second)}
	other := store.Member{Cluster: "staging", ID: "node-c", Host: "10.0.0.3", Port: 7002, Heartbeat: t0}
	for _, m := range []store.Member{b, a, other} {
		if err := l.Heartbeat(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// Every Lease's name and label are valid Kubernetes values, whatever
	// the cluster is called.
	all, err := client.CoordinationV1().Leases("odin").List(ctx, metav1.ListOptions{})
	if err != nil || len(all.Items) != 3 {
		t.Fatalf("leases: %d, %v", len(all.Items), err)
	}
	for _, le := range all.Items {
		if errs := validation.IsDNS1123Subdomain(le.Name); len(errs) > 0 {
			t.Errorf("lease name %q: %v", le.Name, errs)
		}
		if errs := validation.IsValidLabelValue(le.Labels[LabelCluster]); len(errs) > 0 {
			t.Errorf("label %q: %v", le.Labels[LabelCluster], errs)
		}
	}

	got, err := l.Members(ctx, "prod fleet/EU", t0)
	if err != nil {
		t.Fatal(err)
	}
	a.StartedAt, b.StartedAt = a.Heartbeat, b.Heartbeat
	if d := cmp.Diff([]store.Member{a, b}, got); d != "" {
		t.Errorf("members (-want +got):\n%s", d)
	}

	// A renewal moves the heartbeat and keeps the start; a stale member
	// is left out, then pruned, the live one kept.
	a.Heartbeat = t0.Add(10 * time.Second)
	if err := l.Heartbeat(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err = l.Members(ctx, "prod fleet/EU", t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "Node_A" || !got[0].StartedAt.Equal(t0) || !got[0].Heartbeat.Equal(a.Heartbeat) {
		t.Errorf("after renewal: %+v", got)
	}
	n, err := l.PruneMembers(ctx, "prod fleet/EU", t0.Add(5*time.Second))
	if err != nil || n != 1 {
		t.Errorf("prune: %d, %v; want node-b only", n, err)
	}
	if got, _ := l.Members(ctx, "prod fleet/EU", time.Time{}); len(got) != 1 || got[0].ID != "Node_A" {
		t.Errorf("after prune: %+v", got)
	}
	// The other cluster is untouched by all of it; leaving deletes.
	if got, _ := l.Members(ctx, "staging", time.Time{}); len(got) != 1 || got[0].ID != "node-c" {
		t.Errorf("staging: %+v", got)
	}
	if err := l.LeaveCluster(ctx, "prod fleet/EU", "Node_A"); err != nil {
		t.Fatal(err)
	}
	if err := l.LeaveCluster(ctx, "prod fleet/EU", "Node_A"); err != nil {
		t.Errorf("leaving twice: %v", err)
	}
	if got, _ := l.Members(ctx, "prod fleet/EU", time.Time{}); len(got) != 0 {
		t.Errorf("after leave: %+v", got)
	}
}

func TestHeartbeatRefusesAnIncompleteMember(t *testing.T) {
	l := &Leases{Client: fake.NewClientset(), Namespace: "odin"}
	for _, m := range []store.Member{
		{Cluster: "c", ID: "a", Host: "h"},
		{Cluster: "c", Host: "h", Port: 1},
		{Cluster: "c", ID: "a", Host: "h", Port: 1, Kinds: []string{"a,b"}},
	} {
		if err := l.Heartbeat(t.Context(), m); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", m, err)
		}
	}
}

func TestLeaseNamesStayDistinctWhenLong(t *testing.T) {
	long := strings.Repeat("x", 300)
	if leaseName(long, "a") == leaseName(long, "b") {
		t.Error("two members of a long-named cluster share a lease name")
	}
	if errs := validation.IsDNS1123Subdomain(leaseName(long, "a")); len(errs) > 0 {
		t.Errorf("%v", errs)
	}
}
