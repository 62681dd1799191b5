-- Sessions, their messages, tool history, todos and usage.
-- Times are Unix nanoseconds (UTC). Booleans are 0/1.

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    -- A specialist's transcript hangs off the session that started it and
    -- goes with it.
    parent_id          TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    project            TEXT NOT NULL,
    title              TEXT NOT NULL DEFAULT '',
    agent              TEXT NOT NULL DEFAULT '',
    mode               TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    prompt_tokens      INTEGER NOT NULL DEFAULT 0,
    completion_tokens  INTEGER NOT NULL DEFAULT 0,
    cached_tokens      INTEGER NOT NULL DEFAULT 0,
    cost               REAL NOT NULL DEFAULT 0,
    -- No foreign key: messages already reference sessions, and the summary
    -- is always one of this session's own messages (checked in code).
    summary_message_id TEXT NOT NULL DEFAULT '',
    message_count      INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_project_updated ON sessions (project, updated_at);
CREATE INDEX sessions_parent ON sessions (parent_id, created_at);

CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    model      TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    -- The typed parts, protobuf-encoded (see codec.go): a resume reads one
    -- row per message and decodes it by slicing, with no JSON unescaping
    -- and no join with a parts table.
    parts      BLOB NOT NULL,
    UNIQUE (session_id, seq)
) STRICT;

CREATE TABLE tool_calls (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id TEXT NOT NULL DEFAULT '',
    call_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    agent      TEXT NOT NULL DEFAULT '',
    input      TEXT NOT NULL DEFAULT '',
    output     TEXT NOT NULL DEFAULT '',
    is_error   INTEGER NOT NULL DEFAULT 0,
    files      TEXT NOT NULL DEFAULT '[]',
    elapsed_ns INTEGER NOT NULL DEFAULT 0,
    at         INTEGER NOT NULL
) STRICT;

CREATE INDEX tool_calls_session ON tool_calls (session_id, id);

CREATE TABLE todos (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    id         TEXT NOT NULL,
    content    TEXT NOT NULL,
    status     TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
) STRICT, WITHOUT ROWID;

CREATE TABLE usage (
    id                INTEGER PRIMARY KEY,
    -- Kept when the session is deleted: the money was spent all the same.
    session_id        TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    project           TEXT NOT NULL,
    agent             TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens     INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens  INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    at                INTEGER NOT NULL
) STRICT;

CREATE INDEX usage_session ON usage (session_id, id);
CREATE INDEX usage_project_at ON usage (project, at);
CREATE INDEX usage_at ON usage (at);
