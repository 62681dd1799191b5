package store_test

import (
	"context"
	"testing"

	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
	"github.com/odin-code/odin/internal/store/storetest"
)

// openPG opens a Postgres store on a fresh database of srv.
func openPG(t testing.TB, srv *pgtest.Server, opts ...store.Option) *store.Postgres {
	t.Helper()
	s, err := store.OpenPostgres(context.Background(), srv.Database(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgresConformance runs the whole contract against a real
// PostgreSQL server started for it, one database per case.
func TestPostgresConformance(t *testing.T) {
	srv := pgtest.New(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openPG(t, srv) })
}

// TestPostgresReopenKeepsData checks that a second store on the same
// database finds the schema migrated (no second migration) and the data.
func TestPostgresReopenKeepsData(t *testing.T) {
	srv := pgtest.New(t)
	url := srv.Database(t)
	ctx := context.Background()
	a, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := a.CreateSession(ctx, store.Session{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := store.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Session(ctx, sess.ID)
	if err != nil || got.Project != "/p" {
		t.Fatalf("reopened: %+v, %v", got, err)
	}
}
