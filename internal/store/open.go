package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Backends OpenURL knows.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// ParseURL tells which backend a store URL names and what to open:
//   - an absolute file path, or sqlite:// followed by one
//     (sqlite:///home/me/odin.db): SQLite on that file;
//   - postgres://… or postgresql://…: PostgreSQL, the URL as pgx reads it.
//
// Anything else (a relative path, another scheme, an empty string) is
// ErrInvalid with a message saying what is accepted.
func ParseURL(raw string) (backend, target string, err error) {
	const want = "want an absolute file path, sqlite:///abs/path or postgres://…"
	lower := strings.ToLower(raw)
	switch {
	case raw == "":
		return "", "", fmt.Errorf("empty store URL (%s): %w", want, ErrInvalid)
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return BackendPostgres, raw, nil
	case strings.HasPrefix(lower, "sqlite://"):
		p := raw[len("sqlite://"):]
		if !filepath.IsAbs(p) {
			return "", "", fmt.Errorf("store URL %q: the path after sqlite:// must be absolute (%s): %w", raw, want, ErrInvalid)
		}
		return BackendSQLite, filepath.Clean(p), nil
	case !filepath.IsAbs(raw) && strings.Contains(raw, "://"):
		scheme, _, _ := strings.Cut(raw, "://")
		return "", "", fmt.Errorf("store URL scheme %q is not supported (%s): %w", scheme, want, ErrInvalid)
	case !filepath.IsAbs(raw):
		return "", "", fmt.Errorf("store path %q is not absolute (%s): %w", raw, want, ErrInvalid)
	}
	return BackendSQLite, filepath.Clean(raw), nil
}

// OpenURL opens the store a URL names (see ParseURL): *SQLite or
// *Postgres. It is the one place the CLI opens a store.
func OpenURL(ctx context.Context, raw string, opts ...Option) (Store, error) {
	backend, target, err := ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	if backend == BackendPostgres {
		return OpenPostgres(ctx, target, opts...)
	}
	return Open(ctx, target, opts...)
}

// RedactURL returns a store URL fit for messages and logs: a PostgreSQL
// password is masked; a path is returned as it is.
func RedactURL(raw string) string {
	if b, _, err := ParseURL(raw); err == nil && b == BackendPostgres {
		return redactURL(raw)
	}
	return raw
}
