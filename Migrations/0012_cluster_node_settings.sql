-- 0012_cluster_node_settings: what each node of a cluster tells the others about itself.
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a new migration instead.

-- The public WebSocket URL players reach this node's game connections at (`--game-url`), or
-- NULL when its game connections come through the site's front (docs/OPERATIONS.md, "Game
-- connections straight to the node"). Refusals that name the node carry it.
ALTER TABLE cluster_nodes ADD COLUMN game_url TEXT CHECK (game_url IS NULL OR length(game_url) BETWEEN 1 AND 200);

-- How long this node's heartbeat stands for it, in seconds (`--cluster-lease-seconds`). Every
-- node judges the others by its own lease, so a node whose lease differs from a live node's is
-- refused at start; rows written before this column existed had the fixed 6 s.
ALTER TABLE cluster_nodes ADD COLUMN lease_seconds INTEGER NOT NULL DEFAULT 6 CHECK (lease_seconds BETWEEN 2 AND 120);
