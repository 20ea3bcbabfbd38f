-- 0009_checkpoint_slices: a round's checkpoints as a row per slice of the round. PostgreSQL
-- only: SQLite appends a row per game as cheaply as PostgreSQL appends a row per slice.
-- Never edit this file once released: add a new migration instead.

-- A row per game a second cost PostgreSQL about seven times what it costs SQLite, and a bare
-- heap append of those rows already three times (docs/BENCHMARKS.md, "Checkpoints on
-- PostgreSQL"). So a node writes each slice of a round (about a thousand games) as one row
-- here, and a game's rows in game_checkpoints are only those another node must read at
-- once: a whole log handed over, and the logs gathered from a dead process's slices
-- (docs/STORAGE.md, "Checkpoint slices").
CREATE TABLE checkpoint_slices (
    -- From game_checkpoints' own sequence: a game's rows in both tables are joined in id order.
    id BIGINT PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('game_checkpoints', 'id')::regclass),
    -- The process that wrote it (cluster_nodes.instance): its slices are read only once it
    -- is gone, by the node that takes its games.
    instance TEXT NOT NULL,
    -- How many games its text holds.
    games BIGINT NOT NULL CHECK (games > 0),
    -- A line per game (CheckpointSlice.swift): id, steps, moves before, play time, moves.
    data TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX checkpoint_slices_by_instance ON checkpoint_slices(instance, id);
ALTER TABLE checkpoint_slices ALTER COLUMN data SET STORAGE EXTERNAL;
