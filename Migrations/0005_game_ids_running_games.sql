-- 0005_game_ids_running_games: the public game id on every stored game, the `server_crash` end,
-- and running games checkpointed so a crash of the server does not lose them (issue 11).
-- Applied by the migrator inside one transaction with its schema_migrations row, with foreign
-- keys off (so dropping the old `games` does not cascade into best_scores) and checked after.
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'.

-- `games` rebuilt (SQLite cannot change a CHECK in place): the same rows and ids, plus
-- `public_id` and `play_refunded`, and 'server_crash' allowed as an end.
CREATE TABLE games_rebuilt (
    id INTEGER PRIMARY KEY,
    -- The id the player was shown (`gameId` in docs/PROTOCOL.md, 16 hex digits); NULL for the
    -- games stored before this migration, which never kept it.
    public_id TEXT UNIQUE CHECK (public_id <> ''),
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    -- The UInt64 seed's bit pattern as a signed 64-bit integer (seeds above 2^63 are negative).
    seed INTEGER NOT NULL,
    rules_version INTEGER NOT NULL CHECK (rules_version >= 1),
    -- InputLog.encoded, e.g. '57:3L,3L,10R'.
    input_log TEXT NOT NULL CHECK (input_log LIKE '%:%'),
    score INTEGER NOT NULL CHECK (score >= 0),
    steps INTEGER NOT NULL CHECK (steps >= 0),
    -- 'server_crash': the server died while it ran; ended at start-up from its last checkpoint.
    end_reason TEXT NOT NULL CHECK (end_reason IN ('crash', 'abandoned', 'shutdown', 'server_crash')),
    -- Practice games (the tutorial's road) are kept but score nothing: never on a leaderboard.
    practice INTEGER NOT NULL CHECK (practice IN (0, 1)),
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL CHECK (ended_at >= started_at),
    -- Time actually played, in milliseconds (pauses excluded by the server).
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    -- 1 when the free play its start consumed was given back (only a server_crash game).
    play_refunded INTEGER NOT NULL DEFAULT 0 CHECK (play_refunded IN (0, 1)),
    CHECK (play_refunded = 0 OR end_reason = 'server_crash')
) STRICT;

INSERT INTO games_rebuilt (id, player_id, level, seed, rules_version, input_log, score, steps, end_reason,
                           practice, started_at, ended_at, duration_ms)
SELECT id, player_id, level, seed, rules_version, input_log, score, steps, end_reason,
       practice, started_at, ended_at, duration_ms
FROM games;

DROP TABLE games;
ALTER TABLE games_rebuilt RENAME TO games;

-- A player's recent games, newest first (as in 0004).
CREATE INDEX games_by_player ON games(player_id, id DESC);

-- A game while it runs: written when it starts (with the play its start consumed, in one
-- transaction) and deleted in the transaction that stores the finished game in `games`. A row
-- still here when the server starts belongs to a game the server lost by dying: it is ended
-- from its checkpoints below (RunningGameRepository.recoverAll).
CREATE TABLE running_games (
    -- The game's public id, as `games.public_id` will hold it.
    public_id TEXT PRIMARY KEY CHECK (public_id <> ''),
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    seed INTEGER NOT NULL,
    rules_version INTEGER NOT NULL CHECK (rules_version >= 1),
    practice INTEGER NOT NULL CHECK (practice IN (0, 1)),
    -- 1 when its start consumed one of the day's free plays (the `plays` row with this game_id).
    free_play INTEGER NOT NULL CHECK (free_play IN (0, 1)),
    started_at TEXT NOT NULL
) STRICT;

-- Deleting a player cascades through it.
CREATE INDEX running_games_by_player ON running_games(player_id);

-- Running games' input logs as they grow, appended by the server's checkpoint: every interval
-- (1 s by default) one row per game that changed, all in one transaction, holding only what
-- changed since the game's previous row. Appending in id order writes a few new pages a second
-- where rewriting every game's whole log would rewrite thousands. A game's log is its rows in
-- id order from its latest full one (moves_before = 0). Once a minute every running game gets
-- a full row and the rows before them go (RunningGameRepository.checkpoint, compacting), which
-- also removes the rows of games that ended meanwhile.
CREATE TABLE game_checkpoints (
    id INTEGER PRIMARY KEY,
    -- The game (running_games.public_id). No foreign key and no index: either would cost every
    -- append a write at a random place; rows are only ever read all together, in id order.
    public_id TEXT NOT NULL,
    -- The game's step count at this checkpoint (InputLog.steps).
    steps INTEGER NOT NULL CHECK (steps >= 0),
    -- How many of the game's moves came before this row's: 0 for a full log.
    moves_before INTEGER NOT NULL CHECK (moves_before >= 0),
    -- The moves after those, as InputLog.encoded writes them after the colon: '3L,3L,10R', or ''.
    moves TEXT NOT NULL,
    -- Play time so far, pauses excluded.
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    at TEXT NOT NULL
) STRICT;
