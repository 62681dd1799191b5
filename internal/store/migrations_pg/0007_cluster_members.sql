-- PostgreSQL twin of migrations/0006_cluster_members.sql.

CREATE TABLE cluster_members (
    cluster    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    port       INTEGER NOT NULL,
    kinds      TEXT    NOT NULL DEFAULT '',
    started_at BIGINT  NOT NULL,
    heartbeat  BIGINT  NOT NULL,
    PRIMARY KEY (cluster, id)
);

CREATE INDEX cluster_members_heartbeat ON cluster_members (cluster, heartbeat);
