-- Undo checkpoints: the files a change set touched, as they were before.

CREATE TABLE checkpoints (
    id          TEXT PRIMARY KEY,
    session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    project     TEXT NOT NULL,
    label       TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    restored_at INTEGER
) STRICT;

CREATE INDEX checkpoints_project ON checkpoints (project, created_at);
CREATE INDEX checkpoints_session ON checkpoints (session_id);

CREATE TABLE checkpoint_files (
    checkpoint_id TEXT NOT NULL REFERENCES checkpoints(id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    existed       INTEGER NOT NULL,
    mode          INTEGER NOT NULL,
    content       BLOB,
    hash_after    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (checkpoint_id, path)
) STRICT;
