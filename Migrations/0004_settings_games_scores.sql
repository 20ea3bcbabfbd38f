-- 0004_settings_games_scores: settings that follow the player, finished games, leaderboards
-- (DESIGN §4 "Settings that follow the player" and "Leaderboards"; issue 3).
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z': one fixed width, so
-- text order is time order.

-- One settings document per player. The document is PlayerSettings as JSON (keys sorted);
-- the repository validates every field before it gets here. `version` starts at 1 with the
-- first write and goes up by one on every write; a player with no row has the defaults at
-- version 0.
CREATE TABLE player_settings (
    player_id INTEGER PRIMARY KEY REFERENCES players(id) ON DELETE CASCADE,
    version INTEGER NOT NULL CHECK (version >= 1),
    document TEXT NOT NULL CHECK (json_valid(document) AND json_type(document) = 'object'),
    updated_at TEXT NOT NULL
) STRICT;

-- Every finished game, with what it takes to re-simulate it (seed, level, rules version,
-- input log) and what it was stored as (score, steps): `retrorapid verify` compares the two.
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    -- The UInt64 seed's bit pattern as a signed 64-bit integer (seeds above 2^63 are negative).
    seed INTEGER NOT NULL,
    rules_version INTEGER NOT NULL CHECK (rules_version >= 1),
    -- InputLog.encoded, e.g. '57:3L,3L,10R'.
    input_log TEXT NOT NULL CHECK (input_log LIKE '%:%'),
    score INTEGER NOT NULL CHECK (score >= 0),
    steps INTEGER NOT NULL CHECK (steps >= 0),
    end_reason TEXT NOT NULL CHECK (end_reason IN ('crash', 'abandoned', 'shutdown')),
    -- Practice games (the tutorial's road) are kept but score nothing: never on a leaderboard.
    practice INTEGER NOT NULL CHECK (practice IN (0, 1)),
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL CHECK (ended_at >= started_at),
    -- Time actually played, in milliseconds (pauses excluded by the server).
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0)
) STRICT;

-- A player's recent games, newest first.
CREATE INDEX games_by_player ON games(player_id, id DESC);

-- Each player's best score per leaderboard: a level, a period kind ('day', 'week', 'all') and
-- the period's key ('2026-01-15', ISO week '2026-W03', 'all'). A row is replaced only by a
-- strictly higher score, so an equal score keeps its earlier achievement time.
CREATE TABLE best_scores (
    level TEXT NOT NULL CHECK (level IN ('cruise', 'fast', 'rapid')),
    period TEXT NOT NULL CHECK (period IN ('day', 'week', 'all')),
    period_key TEXT NOT NULL CHECK (period_key <> ''),
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    score INTEGER NOT NULL CHECK (score >= 0),
    achieved_at TEXT NOT NULL,
    -- The game that set it (its replay).
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    -- player_id first: it is also the index that deleting a player cascades through.
    PRIMARY KEY (player_id, level, period, period_key)
) STRICT;

-- The ranking order: higher score first, then earlier achievement, then lower player id.
-- Top N and keyset pages are a seek into it and a short walk.
CREATE INDEX best_scores_ranking ON best_scores(level, period, period_key, score DESC, achieved_at, player_id);

-- Deleting a game (a player's games, when the player goes) finds its best scores without a scan.
CREATE INDEX best_scores_by_game ON best_scores(game_id);

-- How many players hold each score on each board: a rank is the players above (a sum over
-- the distinct higher scores, a few thousand rows at most in practice) plus those who reached
-- the same score earlier (a count over one score's entries in best_scores_ranking). Counting
-- every entry ahead in best_scores_ranking instead costs time in proportion to the rank: about
-- 40 ms for a middle rank of a million (docs/BENCHMARKS.md). Kept exact by the triggers below,
-- which also run for rows removed by ON DELETE CASCADE.
CREATE TABLE score_counts (
    level TEXT NOT NULL,
    period TEXT NOT NULL,
    period_key TEXT NOT NULL,
    score INTEGER NOT NULL,
    players INTEGER NOT NULL CHECK (players >= 0),
    PRIMARY KEY (level, period, period_key, score)
) STRICT;

-- The sums read only this index.
CREATE INDEX score_counts_covering ON score_counts(level, period, period_key, score, players);

CREATE TRIGGER best_scores_counted_on_insert AFTER INSERT ON best_scores
BEGIN
    INSERT INTO score_counts (level, period, period_key, score, players)
    VALUES (NEW.level, NEW.period, NEW.period_key, NEW.score, 1)
    ON CONFLICT (level, period, period_key, score) DO UPDATE SET players = players + 1;
END;

CREATE TRIGGER best_scores_counted_on_update AFTER UPDATE OF level, period, period_key, score ON best_scores
BEGIN
    UPDATE score_counts SET players = players - 1
    WHERE level = OLD.level AND period = OLD.period AND period_key = OLD.period_key AND score = OLD.score;
    DELETE FROM score_counts
    WHERE level = OLD.level AND period = OLD.period AND period_key = OLD.period_key AND score = OLD.score
      AND players = 0;
    INSERT INTO score_counts (level, period, period_key, score, players)
    VALUES (NEW.level, NEW.period, NEW.period_key, NEW.score, 1)
    ON CONFLICT (level, period, period_key, score) DO UPDATE SET players = players + 1;
END;

CREATE TRIGGER best_scores_counted_on_delete AFTER DELETE ON best_scores
BEGIN
    UPDATE score_counts SET players = players - 1
    WHERE level = OLD.level AND period = OLD.period AND period_key = OLD.period_key AND score = OLD.score;
    DELETE FROM score_counts
    WHERE level = OLD.level AND period = OLD.period AND period_key = OLD.period_key AND score = OLD.score
      AND players = 0;
END;
