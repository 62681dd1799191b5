-- PostgreSQL twin of migrations/0008_usage_parts.sql.

ALTER TABLE usage ADD COLUMN parts TEXT NOT NULL DEFAULT '';
