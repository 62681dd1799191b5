-- PostgreSQL twin of migrations/0005_fencing.sql.

ALTER TABLE sessions ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
