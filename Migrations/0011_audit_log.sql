-- 0011_audit_log: every change an operator makes, from the CLI or the console (docs/OPERATIONS.md,
-- "Audit log"): who, when, what, and the state before and after. Written in the transaction
-- of the change itself, so a change is never without its entry nor an entry without its change.
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'.

-- `actor` is 'cli:USER' (the system user who ran the command) or 'console:NAME' (an operator
-- account); `action` names the change ('codes.create'); `subject` what it changed (a code, a
-- player's public id, an order, an operator). Never a secret: no password, token or hash.
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL CHECK (actor <> '' AND length(actor) <= 100),
    action TEXT NOT NULL CHECK (action <> '' AND length(action) <= 60),
    subject TEXT NOT NULL CHECK (length(subject) <= 200),
    before_state TEXT CHECK (before_state IS NULL OR length(before_state) <= 2000),
    after_state TEXT CHECK (after_state IS NULL OR length(after_state) <= 2000)
) STRICT;

-- Never edited: the entries are what happened, so the schema refuses to change or remove one.
CREATE TRIGGER audit_log_is_never_updated BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is never edited');
END;
CREATE TRIGGER audit_log_is_never_deleted BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'the audit log is never edited');
END;
