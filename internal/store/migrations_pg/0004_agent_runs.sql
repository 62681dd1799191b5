-- PostgreSQL twin of migrations/0004_agent_runs.sql. An upsert keeps the
-- row, and with it its rowid, so "the order first stored" holds as in SQLite.

CREATE TABLE agent_runs (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    data       TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    rowid      BIGINT GENERATED ALWAYS AS IDENTITY
);

CREATE INDEX agent_runs_session ON agent_runs (session_id);
