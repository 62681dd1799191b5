-- Cluster membership (issue 29): each node of an Odin cluster (odin serve
-- --cluster, odin worker) upserts its row every heartbeat; nodes whose
-- heartbeat is older than the cluster's TTL are not members any more.
-- kinds is the comma-separated list of grain kinds the node hosts.

CREATE TABLE cluster_members (
    cluster    TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    port       INTEGER NOT NULL,
    kinds      TEXT    NOT NULL DEFAULT '',
    started_at INTEGER NOT NULL,
    heartbeat  INTEGER NOT NULL,
    PRIMARY KEY (cluster, id)
) STRICT;

CREATE INDEX cluster_members_heartbeat ON cluster_members (cluster, heartbeat);
