-- PostgreSQL twin of migrations/0003_cache.sql.

CREATE TABLE cache (
    key       TEXT PRIMARY KEY,
    value     BYTEA NOT NULL,
    stored_at BIGINT NOT NULL
);

CREATE INDEX cache_stored_at ON cache (stored_at);
