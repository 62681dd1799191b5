package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
)

// testMembership runs the members table's contract on one backend.
func testMembership(t *testing.T, m store.Membership) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := store.Member{Cluster: "odin", ID: "a", Host: "127.0.0.1", Port: 7001, Kinds: []string{"session"}, StartedAt: t0, Heartbeat: t0}
	b := store.Member{Cluster: "odin", ID: "b", Host: "127.0.0.1", Port: 7002, Heartbeat: t0.Add(time.Second)}
	other := store.Member{Cluster: "other", ID: "c", Host: "127.0.0.1", Port: 7003, Heartbeat: t0.Add(time.Second)}
	for _, x := range []store.Member{a, b, other} {
		if err := m.Heartbeat(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(since time.Time) []string {
		t.Helper()
		ms, err := m.Members(ctx, "odin", since)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ms {
			out = append(out, x.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"a", "b"}, ids(t0)); diff != "" {
		t.Errorf("members since t0 (-want +got):\n%s", diff)
	}
	// a's heartbeat is stale half a second later; b's is not.
	if diff := cmp.Diff([]string{"b"}, ids(t0.Add(500*time.Millisecond))); diff != "" {
		t.Errorf("members since t0+0.5s (-want +got):\n%s", diff)
	}
	// A later beat refreshes a, moves it to another port and keeps its start.
	a2 := a
	a2.Port, a2.Heartbeat, a2.StartedAt = 7010, t0.Add(2*time.Second), time.Time{}
	if err := m.Heartbeat(ctx, a2); err != nil {
		t.Fatal(err)
	}
	ms, err := m.Members(ctx, "odin", t0.Add(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Member{{Cluster: "odin", ID: "a", Host: "127.0.0.1", Port: 7010, Kinds: []string{"session"}, StartedAt: t0, Heartbeat: t0.Add(2 * time.Second)}}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("refreshed member (-want +got):\n%s", diff)
	}
	n, err := m.PruneMembers(ctx, "odin", t0.Add(1500*time.Millisecond))
	if err != nil || n != 1 {
		t.Errorf("prune: %d rows, %v; want 1 (b)", n, err)
	}
	if err := m.LeaveCluster(ctx, "odin", "a"); err != nil {
		t.Fatal(err)
	}
	if got := ids(time.Time{}); len(got) != 0 {
		t.Errorf("after prune and leave: %v, want none", got)
	}
	// The other cluster's row is untouched by all of it.
	if ms, err := m.Members(ctx, "other", time.Time{}); err != nil || len(ms) != 1 {
		t.Errorf("other cluster: %v, %v", ms, err)
	}
	for _, bad := range []store.Member{
		{Cluster: "odin", ID: "x", Host: "127.0.0.1"},
		{Cluster: "odin", Host: "127.0.0.1", Port: 1},
		{Cluster: "odin", ID: "x", Host: "127.0.0.1", Port: 1, Kinds: []string{"a,b"}},
	} {
		if err := m.Heartbeat(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("heartbeat %+v: %v, want ErrInvalid", bad, err)
		}
	}
}

func TestMembershipSQLite(t *testing.T) {
	s, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "odin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testMembership(t, s)
}

func TestMembershipPostgres(t *testing.T) {
	testMembership(t, openPG(t, pgtest.New(t)))
}
