-- The agent-run registry (AgentMonitor): one row per specialist run of a
-- session, as JSON the actors define (status, times, tokens, last
-- activities). The run's transcript is the child session of the same ID.

CREATE TABLE agent_runs (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    data       TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX agent_runs_session ON agent_runs (session_id);
