-- 0009_rate_limits: the counts behind the limits on guessing secrets and on new players
-- (docs/STORAGE.md, "Rate limits"), kept here rather than in each process's memory, so every
-- node on one database and every restart sees the same counts. Written by
-- RateLimitRepository. Never edit this file once released: add a new migration instead.
-- Times here are whole milliseconds since 1970-01-01T00:00:00Z (not the ISO text of the other
-- tables): a window is exact to the millisecond, and the arithmetic stays in integers.

-- One row per key a limit counts (an action, who it is counted for, and the client address,
-- player row id or 'server'). On PostgreSQL every check of a key updates its row first, and
-- so holds the row's lock until it commits; here the IMMEDIATE transaction's write lock does
-- that, and the row keeps both schemas alike (retrorapid copy-database). `touched_ms` is the
-- latest check, for pruning.
CREATE TABLE rate_limit_keys (
    action TEXT NOT NULL CHECK (action <> '' AND length(action) <= 40),
    scope TEXT NOT NULL CHECK (scope <> '' AND length(scope) <= 40),
    key TEXT NOT NULL CHECK (key <> '' AND length(key) <= 200),
    touched_ms INTEGER NOT NULL CHECK (touched_ms >= 0),
    PRIMARY KEY (action, scope, key)
) STRICT;

-- One row per event counted: a failed guess, or a new player. A guess is counted before it is
-- tried and its row deleted again when it turns out not to be a failure. No foreign key to
-- rate_limit_keys: both are pruned by time alone, and an event is never newer than its key's
-- `touched_ms`.
CREATE TABLE rate_limit_events (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    at_ms INTEGER NOT NULL CHECK (at_ms >= 0)
) STRICT;

-- A key's events newest first (the limit-th newest decides); and the old ones, for pruning.
CREATE INDEX rate_limit_events_by_key ON rate_limit_events(action, scope, key, at_ms);
CREATE INDEX rate_limit_events_by_time ON rate_limit_events(at_ms);
