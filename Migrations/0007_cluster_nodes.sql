-- 0007_cluster_nodes: the nodes of a cluster on one database and who holds each running game
-- (issue 15). Written only in cluster mode (a bus between nodes); a single node leaves both
-- empty. Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'.

-- One row per node (`--node-id`), refreshed by its heartbeat every 2 s
-- (ClusterLease.heartbeat). A row older than the lease (3 heartbeats) is a dead node's: its
-- games may be claimed, and another process may take its id.
CREATE TABLE cluster_nodes (
    node_id TEXT PRIMARY KEY CHECK (node_id <> ''),
    -- The process holding the id (random, new each start): a second process with the same id
    -- is refused while this one's row is fresh.
    instance TEXT NOT NULL CHECK (instance <> ''),
    started_at TEXT NOT NULL,
    seen_at TEXT NOT NULL
) STRICT;

-- The node that runs each running game. Goes with its game (stored, or cancelled). No foreign
-- key to cluster_nodes: a node's row may go (a graceful stop) while its released games wait.
CREATE TABLE game_holders (
    game_id TEXT PRIMARY KEY REFERENCES running_games(public_id) ON DELETE CASCADE,
    -- One game per player across the cluster: a second game's claim fails on this.
    player_id INTEGER NOT NULL UNIQUE REFERENCES players(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL CHECK (node_id <> ''),
    -- 1 once its node let go of it (its log checkpointed whole): any node may claim it.
    released INTEGER NOT NULL CHECK (released IN (0, 1)),
    -- When it was claimed, or released.
    since TEXT NOT NULL
) STRICT;

CREATE INDEX game_holders_by_node ON game_holders(node_id);
