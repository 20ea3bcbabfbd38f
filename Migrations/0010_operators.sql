-- 0010_operators: the accounts of the people who run the service (docs/OPERATIONS.md,
-- "Operator accounts"), apart from the players: an operator is never a player, and signs in
-- with a password of the service's making, stored only as a salted PBKDF2 hash.
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'.

-- A name is never reused, even once its account is disabled, so "who did it" always names
-- one person. `password_hash` is 'pbkdf2-sha256$ROUNDS$SALT$HASH' (OperatorPassword).
CREATE TABLE operators (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 2 AND 32),
    role TEXT NOT NULL CHECK (role IN ('viewer', 'admin')),
    password_hash TEXT NOT NULL CHECK (password_hash LIKE 'pbkdf2-sha256$%'),
    created_at TEXT NOT NULL,
    password_set_at TEXT NOT NULL,
    disabled_at TEXT
) STRICT;
