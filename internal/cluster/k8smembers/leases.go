//go:build k8s

package k8smembers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/odin-code/odin/internal/store"
)

// The label every member's Lease carries (a digest of the cluster name:
// label values are short and restricted), and the annotations holding
// the member's row as given (names and kinds of any spelling).
const (
	LabelCluster  = "odin.dev/cluster"
	annCluster    = "odin.dev/cluster"
	annID         = "odin.dev/member-id"
	annHost       = "odin.dev/host"
	annPort       = "odin.dev/port"
	annKinds      = "odin.dev/kinds"
	managedBy     = "app.kubernetes.io/managed-by"
	managedByOdin = "odin"
)

// Leases implements store.Membership over the Leases of one namespace.
// Heartbeats are the Leases' renew times, written with the member's own
// clock as the store's rows are.
type Leases struct {
	Client    kubernetes.Interface
	Namespace string
}

var _ store.Membership = (*Leases)(nil)

// Heartbeat implements store.Membership: it creates the member's Lease or
// renews it, keeping its acquire time (the member's start).
func (l *Leases) Heartbeat(ctx context.Context, m store.Member) error {
	if m.Cluster == "" || m.ID == "" || m.Host == "" || m.Port <= 0 {
		return fmt.Errorf("k8smembers: heartbeat: member needs cluster, id, host and port (got %q %q %q %d): %w", m.Cluster, m.ID, m.Host, m.Port, store.ErrInvalid)
	}
	for _, k := range m.Kinds {
		if k == "" || strings.Contains(k, ",") {
			return fmt.Errorf("k8smembers: heartbeat: kind %q: %w", k, store.ErrInvalid)
		}
	}
	beat := m.Heartbeat
	if beat.IsZero() {
		beat = time.Now()
	}
	leases := l.Client.CoordinationV1().Leases(l.Namespace)
	name := leaseName(m.Cluster, m.ID)
	// An update that lost a race with another writer of the same Lease
	// (only a member restarted under its old ID would be one) is tried
	// again on the fresh copy.
	for range 3 {
		cur, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			started := m.StartedAt
			if started.IsZero() {
				started = beat
			}
			_, err = leases.Create(ctx, newLease(name, m, started, beat), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return wrap("create", name, err)
		}
		if err != nil {
			return wrap("get", name, err)
		}
		next := cur.DeepCopy()
		fill(next, m)
		renew := metav1.NewMicroTime(beat)
		next.Spec.RenewTime = &renew
		if next.Spec.AcquireTime == nil || !m.StartedAt.IsZero() && next.Spec.AcquireTime.Time.IsZero() {
			acq := metav1.NewMicroTime(beat)
			next.Spec.AcquireTime = &acq
		}
		_, err = leases.Update(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		return wrap("renew", name, err)
	}
	return fmt.Errorf("k8smembers: renew %s: conflicting writers", name)
}

// Members implements store.Membership: the cluster's Leases renewed at or
// after since, ordered by member ID.
func (l *Leases) Members(ctx context.Context, cluster string, since time.Time) ([]store.Member, error) {
	list, err := l.list(ctx, cluster)
	if err != nil {
		return nil, err
	}
	var out []store.Member
	for _, le := range list {
		m, ok := memberOf(le)
		if ok && !m.Heartbeat.Before(since) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b store.Member) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// LeaveCluster implements store.Membership: it deletes the member's Lease.
func (l *Leases) LeaveCluster(ctx context.Context, cluster, id string) error {
	name := leaseName(cluster, id)
	err := l.Client.CoordinationV1().Leases(l.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return wrap("delete", name, err)
}

// PruneMembers implements store.Membership: it deletes the cluster's
// Leases last renewed before before.
func (l *Leases) PruneMembers(ctx context.Context, cluster string, before time.Time) (int64, error) {
	list, err := l.list(ctx, cluster)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, le := range list {
		m, ok := memberOf(le)
		if !ok || !m.Heartbeat.Before(before) {
			continue
		}
		// Deleted only as read: a member that renewed meanwhile keeps
		// its Lease.
		rv := le.ResourceVersion
		err := l.Client.CoordinationV1().Leases(l.Namespace).Delete(ctx, le.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		switch {
		case err == nil:
			n++
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		default:
			return n, wrap("prune", le.Name, err)
		}
	}
	return n, nil
}

func (l *Leases) list(ctx context.Context, cluster string) ([]coordv1.Lease, error) {
	res, err := l.Client.CoordinationV1().Leases(l.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelCluster + "=" + clusterLabel(cluster)})
	if err != nil {
		return nil, fmt.Errorf("k8smembers: list the leases of cluster %q in namespace %q: %w", cluster, l.Namespace, err)
	}
	// The label is a digest: the annotation tells clusters apart for sure.
	return slices.DeleteFunc(res.Items, func(le coordv1.Lease) bool { return le.Annotations[annCluster] != cluster }), nil
}

func newLease(name string, m store.Member, started, beat time.Time) *coordv1.Lease {
	acq, renew := metav1.NewMicroTime(started), metav1.NewMicroTime(beat)
	le := &coordv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       coordv1.LeaseSpec{AcquireTime: &acq, RenewTime: &renew},
	}
	fill(le, m)
	return le
}

// fill writes m's row into le's labels, annotations and holder.
func fill(le *coordv1.Lease, m store.Member) {
	if le.Labels == nil {
		le.Labels = map[string]string{}
	}
	le.Labels[LabelCluster] = clusterLabel(m.Cluster)
	le.Labels[managedBy] = managedByOdin
	if le.Annotations == nil {
		le.Annotations = map[string]string{}
	}
	le.Annotations[annCluster] = m.Cluster
	le.Annotations[annID] = m.ID
	le.Annotations[annHost] = m.Host
	le.Annotations[annPort] = strconv.Itoa(m.Port)
	le.Annotations[annKinds] = strings.Join(m.Kinds, ",")
	holder := m.ID
	le.Spec.HolderIdentity = &holder
}

// memberOf reads a Lease back as a member; false for one that is not a
// whole member's (written by something else).
func memberOf(le coordv1.Lease) (store.Member, bool) {
	a := le.Annotations
	port, err := strconv.Atoi(a[annPort])
	if err != nil || a[annID] == "" || a[annHost] == "" || le.Spec.RenewTime == nil {
		return store.Member{}, false
	}
	m := store.Member{Cluster: a[annCluster], ID: a[annID], Host: a[annHost], Port: port, Heartbeat: le.Spec.RenewTime.Time}
	if k := a[annKinds]; k != "" {
		m.Kinds = strings.Split(k, ",")
	}
	if le.Spec.AcquireTime != nil {
		m.StartedAt = le.Spec.AcquireTime.Time
	}
	return m, true
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// leaseName is a valid object name for the member (DNS-1123 subdomain):
// readable where the names allow, unique by a digest of both.
func leaseName(cluster, id string) string {
	sum := sha256.Sum256([]byte(cluster + "\x00" + id))
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(cluster+"-"+id), "-"), "-")
	if len(base) > 200 {
		base = base[:200]
	}
	return strings.Trim("odin-"+base, "-") + "-" + hex.EncodeToString(sum[:6])
}

// clusterLabel is the label value for a cluster name (at most 63
// characters of [a-z0-9]): a digest, since names are free.
func clusterLabel(cluster string) string {
	sum := sha256.Sum256([]byte(cluster))
	return hex.EncodeToString(sum[:16])
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("k8smembers: %s lease %s: %w", op, name, err)
}
