package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE x = ? AND y IN (?, ?)`, `SELECT a FROM t WHERE x = $1 AND y IN ($2, $3)`},
		{`SELECT '?', "a?b", ? -- what?
		 FROM t /* ? */ WHERE z = ?`, `SELECT '?', "a?b", $1 -- what?
		 FROM t /* ? */ WHERE z = $2`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT '?`, `SELECT '?`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMigrationSetsMatch: a schema version must mean the same step on
// both backends.
func TestMigrationSetsMatch(t *testing.T) {
	lite, err := migrationsOf(dialectSQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := migrationsOf(dialectPostgres)
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) != len(pg) {
		t.Fatalf("%d SQLite migrations, %d PostgreSQL ones", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].name != pg[i].name {
			t.Errorf("migration %d: %s vs %s", i+1, lite[i].name, pg[i].name)
		}
	}
}
