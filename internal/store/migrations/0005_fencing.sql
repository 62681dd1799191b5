-- Fencing (issue 28): a session's writer holds a claim with an epoch;
-- every write through the claim checks that its epoch is still the
-- session's, so a writer that lost the session (a zombie) cannot write.

ALTER TABLE sessions ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
