-- 0008_play_together: the daily road, races and where race rooms live (issue 16).
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'; days are '2026-01-15'.

-- One road per UTC day per level: its seed is drawn at random the first time anyone asks
-- (INSERT … ON CONFLICT DO NOTHING, then read: every asker gets the row that won), so every
-- node and player meets the same road and nobody can compute it ahead.
CREATE TABLE daily_roads (
    day TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    -- The UInt64 seed's bit pattern as a signed 64-bit integer, as in games.
    seed INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (day, level)
) STRICT;

-- Which road a game ran on: its own random seed, a day's road ('daily', with the day), or a
-- stored game's seed raced as a ghost (always practice). Added columns, not a rebuild: the
-- existing rows are 'random'.
ALTER TABLE games ADD COLUMN road TEXT NOT NULL DEFAULT 'random'
    CHECK (road IN ('random', 'daily', 'ghost') AND (road <> 'ghost' OR practice = 1));
ALTER TABLE games ADD COLUMN daily_day TEXT CHECK ((road = 'daily') = (daily_day IS NOT NULL));

-- One scored daily game per player per day per level, whatever wrote it. The attempt itself is
-- taken when the game starts (daily_attempts, below); this backs it for the stored games.
CREATE UNIQUE INDEX games_one_scored_daily ON games(player_id, level, daily_day)
    WHERE daily_day IS NOT NULL AND practice = 0;

-- A running game's road, so a game recovered after a crash keeps it.
ALTER TABLE running_games ADD COLUMN road TEXT NOT NULL DEFAULT 'random'
    CHECK (road IN ('random', 'daily', 'ghost') AND (road <> 'ghost' OR practice = 1));
ALTER TABLE running_games ADD COLUMN daily_day TEXT CHECK ((road = 'daily') = (daily_day IS NOT NULL));

-- Each player's one scored attempt at a day's road of a level: inserted by
-- RunningGameRepository.begin in the transaction that consumes the play and begins the game
-- (ON CONFLICT DO NOTHING: a second start finds the row and is refused, changing nothing), and
-- deleted only when that start is cancelled (the game never ran). A crashed, abandoned or
-- recovered game keeps it: the attempt was made.
CREATE TABLE daily_attempts (
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    day TEXT NOT NULL,
    -- The game that is the attempt (running_games.public_id, then games.public_id).
    game_id TEXT NOT NULL UNIQUE CHECK (game_id <> ''),
    started_at TEXT NOT NULL,
    PRIMARY KEY (player_id, level, day)
) STRICT;

-- A finished race: a room's racers on one seed from one start (RaceRepository.record).
CREATE TABLE races (
    id INTEGER PRIMARY KEY,
    -- `raceId` in docs/PROTOCOL.md and docs/API.md: 16 hex digits.
    public_id TEXT NOT NULL UNIQUE CHECK (public_id <> ''),
    -- The room's invite code (quick races have one too); codes are reused after a room closes.
    room_code TEXT NOT NULL CHECK (room_code <> ''),
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    practice INTEGER NOT NULL CHECK (practice IN (0, 1)),
    seed INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL CHECK (ended_at >= started_at)
) STRICT;

-- A racer's place in a race, beside their game (stored as any game). `end_reason` is the
-- game's, or 'time_limit' for a racer still racing when the race's time ran out (the game is
-- stored 'abandoned' with its score: games.end_reason cannot change without a rebuild).
CREATE TABLE race_entries (
    race_id INTEGER NOT NULL REFERENCES races(id) ON DELETE CASCADE,
    place INTEGER NOT NULL CHECK (place BETWEEN 1 AND 8),
    seat INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 7),
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    game_id TEXT NOT NULL UNIQUE REFERENCES games(public_id) ON DELETE CASCADE,
    score INTEGER NOT NULL CHECK (score >= 0),
    end_reason TEXT NOT NULL CHECK (end_reason IN ('crash', 'abandoned', 'shutdown', 'server_crash', 'time_limit')),
    PRIMARY KEY (race_id, place),
    UNIQUE (race_id, seat)
) STRICT;

-- Deleting a player cascades through it.
CREATE INDEX race_entries_by_player ON race_entries(player_id);

-- The node that holds each open race room, in cluster mode (a single node leaves it empty):
-- a join that reaches another node is sent here. A node's rows go when it leaves or a new
-- process takes its id; a dead node's rows are not found and their codes may be placed again.
CREATE TABLE room_places (
    code TEXT PRIMARY KEY CHECK (code <> ''),
    node_id TEXT NOT NULL CHECK (node_id <> ''),
    created_at TEXT NOT NULL
) STRICT;

CREATE INDEX room_places_by_node ON room_places(node_id);
