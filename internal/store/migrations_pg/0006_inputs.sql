-- PostgreSQL twin of migrations/0006_inputs.sql.

CREATE TABLE inputs (
    rowid      BIGINT GENERATED ALWAYS AS IDENTITY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('accepted', 'done')),
    body       TEXT NOT NULL DEFAULT '',
    mode       TEXT NOT NULL DEFAULT '',
    agent      TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, id)
);

CREATE INDEX inputs_pending ON inputs (state, session_id);

ALTER TABLE messages ADD COLUMN input_id TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN interrupted BIGINT NOT NULL DEFAULT 0;
