package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/odin-code/odin/internal/store"
	"github.com/odin-code/odin/internal/store/pgtest"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, backend, target string
		bad                 string // substring of the error, "" for success
	}{
		{in: "/var/lib/odin.db", backend: store.BackendSQLite, target: "/var/lib/odin.db"},
		{in: "sqlite:///var/lib/odin.db", backend: store.BackendSQLite, target: "/var/lib/odin.db"},
		{in: "postgres://u:p@db/odin?sslmode=disable", backend: store.BackendPostgres, target: "postgres://u:p@db/odin?sslmode=disable"},
		{in: "postgresql://db/odin", backend: store.BackendPostgres, target: "postgresql://db/odin"},
		{in: "", bad: "empty store URL"},
		{in: "odin.db", bad: "not absolute"},
		{in: "sqlite://odin.db", bad: "must be absolute"},
		{in: "mysql://db/odin", bad: `scheme "mysql" is not supported`},
	} {
		b, target, err := store.ParseURL(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !errors.Is(err, store.ErrInvalid) {
				t.Errorf("ParseURL(%q) = %q, %q, %v; want ErrInvalid with %q", tc.in, b, target, err, tc.bad)
			}
			continue
		}
		if err != nil || b != tc.backend || target != tc.target {
			t.Errorf("ParseURL(%q) = %q, %q, %v; want %q, %q", tc.in, b, target, err, tc.backend, tc.target)
		}
	}
}

func TestRedactURL(t *testing.T) {
	got := store.RedactURL("postgres://odin:s3cret-pw@db.example/odin")
	if strings.Contains(got, "s3cret-pw") || !strings.Contains(got, "db.example/odin") {
		t.Fatalf("RedactURL = %q", got)
	}
}

// TestOpenURL opens both backends through the one entry point and checks
// each is the backend its URL names, by what it stores.
func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "odin.db")
	lite, err := store.OpenURL(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if _, ok := lite.(*store.SQLite); !ok {
		t.Fatalf("sqlite:// opened %T", lite)
	}
	if _, err := lite.CreateSession(ctx, store.Session{Project: "/p"}); err != nil {
		t.Fatal(err)
	}
	again, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if ss, err := again.Sessions(ctx, store.SessionQuery{}); err != nil || len(ss) != 1 {
		t.Fatalf("the file named by the URL holds %d sessions (%v), want 1", len(ss), err)
	}

	srv := pgtest.New(t)
	pg, err := store.OpenURL(ctx, srv.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, ok := pg.(*store.Postgres); !ok {
		t.Fatalf("postgres:// opened %T", pg)
	}
}
