-- 0002_cluster_nodes: the nodes of a cluster on one database and who holds each running game,
-- as Migrations/0007_cluster_nodes.sql has them for SQLite (flags BOOLEAN). Written only in
-- cluster mode. Never edit this file once released: add a new migration instead.
-- How each rule stays exact under concurrency: RetroRapidPostgreSQL's PostgresClusterRepository.

-- One row per node (`--node-id`), refreshed by its heartbeat every 2 s; older than the lease
-- (3 heartbeats) it is a dead node's.
CREATE TABLE cluster_nodes (
    node_id TEXT PRIMARY KEY CHECK (node_id <> ''),
    -- The process holding the id (random, new each start).
    instance TEXT NOT NULL CHECK (instance <> ''),
    started_at TEXT NOT NULL,
    seen_at TEXT NOT NULL
);

-- The node that runs each running game; goes with its game.
CREATE TABLE game_holders (
    game_id TEXT PRIMARY KEY REFERENCES running_games(public_id) ON DELETE CASCADE,
    -- One game per player across the cluster: a second game's claim fails on this.
    player_id BIGINT NOT NULL UNIQUE REFERENCES players(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL CHECK (node_id <> ''),
    -- True once its node let go of it (its log checkpointed whole): any node may claim it.
    released BOOLEAN NOT NULL,
    -- When it was claimed, or released.
    since TEXT NOT NULL
);

CREATE INDEX game_holders_by_node ON game_holders(node_id);
