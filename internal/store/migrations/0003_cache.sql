-- A key/value cache for web fetches, pruned by age.

CREATE TABLE cache (
    key       TEXT PRIMARY KEY,
    value     BLOB NOT NULL,
    stored_at INTEGER NOT NULL
) STRICT;

CREATE INDEX cache_stored_at ON cache (stored_at);
