package store

import "context"

// WithSchemaForTest stops migrations at version v, to build the old
// databases the upgrade tests open.
func WithSchemaForTest(v int) Option { return func(o *options) { o.schema = v } }

// AppliedVersions lists the versions recorded in schema_migrations.
func (s *SQLite) AppliedVersions(ctx context.Context) ([]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
