-- PostgreSQL twin of migrations/0002_checkpoints.sql.

CREATE TABLE checkpoints (
    id          TEXT PRIMARY KEY,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    project     TEXT NOT NULL,
    label       TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL,
    restored_at BIGINT,
    rowid       BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE INDEX checkpoints_project ON checkpoints (project, created_at);
CREATE INDEX checkpoints_session ON checkpoints (session_id);

CREATE TABLE checkpoint_files (
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    existed       BIGINT NOT NULL,
    mode          BIGINT NOT NULL,
    content       BYTEA,
    hash_after    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (checkpoint_id, path)
);
