-- 0002_link_codes: short single-use codes that join a second device to a player (DESIGN §4).
-- A signed-in device creates a code; a new device enters it within minutes and gets its own
-- device token for the same player. Times are ISO-8601 UTC text, e.g. '2026-01-15T10:23:45Z'.

CREATE TABLE link_codes (
    id INTEGER PRIMARY KEY,
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    -- The device that showed the code: if it is revoked before the code is claimed, the code
    -- stops working with it.
    created_by_device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    -- SHA-256 of the 8 normalised symbols (e.g. 'K7Q4M2XD'), never the code itself: a backup
    -- or a glance at the table cannot join a device while the code is live.
    code_hash BLOB NOT NULL UNIQUE CHECK (length(code_hash) = 32),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL CHECK (expires_at > created_at),
    -- Set once, when a device claims the code: single use.
    claimed_at TEXT,
    claimed_by_device_id INTEGER REFERENCES devices(id) ON DELETE CASCADE,
    CHECK ((claimed_at IS NULL) = (claimed_by_device_id IS NULL))
) STRICT;

-- The creation rate limit counts a player's recent codes; old rows are purged by player too.
CREATE INDEX link_codes_by_player ON link_codes(player_id, created_at);
