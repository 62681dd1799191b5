-- Idempotent inputs (issue 28): an input is stored under the ID its
-- caller chose (an Idempotency-Key) when it is accepted, and marked done
-- in the transaction that stores its final reply; inputs still accepted
-- when a session is opened are the turns a dead process left unfinished.

CREATE TABLE inputs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('accepted', 'done')),
    -- What was submitted, to submit it again if no user message was
    -- stored before the crash.
    body       TEXT NOT NULL DEFAULT '',
    mode       TEXT NOT NULL DEFAULT '',
    agent      TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, id)
) STRICT;

CREATE INDEX inputs_pending ON inputs (state, session_id);

-- The user message an input became, and replies cut off by a crash
-- (kept for the transcript, left out of the model's view).
ALTER TABLE messages ADD COLUMN input_id TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0;
