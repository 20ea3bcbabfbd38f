-- 0001_initial: players and their devices (DESIGN §4, "Identity without passwords").
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add 0002_… instead.
-- Times are ISO-8601 UTC text, e.g. '2026-01-15T10:23:45Z'.

-- A player: who owns the plays, settings and scores. No password, no e-mail.
CREATE TABLE players (
    id INTEGER PRIMARY KEY,
    -- The id shown outside the server (URLs, leaderboards): never the rowid.
    public_id TEXT NOT NULL UNIQUE CHECK (public_id <> ''),
    display_name TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

-- A device signed in as a player. The 256-bit token is given to the client once; only its
-- SHA-256 is stored, so a copy of the database cannot sign anyone in.
CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    token_hash BLOB NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    last_seen_at TEXT,
    -- Set when the player revokes the device; the row stays so the list can show it.
    revoked_at TEXT
) STRICT;

-- Listing a player's devices, and the ON DELETE CASCADE, look devices up by player.
CREATE INDEX devices_by_player ON devices(player_id, created_at);
