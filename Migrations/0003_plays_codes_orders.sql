-- 0003_plays_codes_orders: the daily quota, unlimited play, promo codes, orders and the payment
-- provider's webhook events (DESIGN §4, "Daily free plays" and "Unlimited play and codes").
-- Applied by the migrator inside one transaction with its schema_migrations row.
-- Never edit this file once released: add a later migration instead.
-- Times are ISO-8601 UTC text, e.g. '2026-01-15T10:23:45Z'; days are 'YYYY-MM-DD' (UTC).
-- Money is integer minor units (pence) plus an ISO 4217 currency code, never floating point.

-- One free play consumed by a player on a UTC day. The quota is the count of a player's rows
-- for the day; QuotaRepository inserts a row only while that count is under the limit, in one
-- conditional INSERT inside an IMMEDIATE transaction. Players with unlimited play consume none.
CREATE TABLE plays (
    id INTEGER PRIMARY KEY,
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    day TEXT NOT NULL CHECK (length(day) = 10 AND day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    -- The game the play started, when known: resuming that game consumes no second play.
    game_id TEXT CHECK (game_id <> ''),
    consumed_at TEXT NOT NULL,
    UNIQUE (player_id, game_id)
) STRICT;

CREATE INDEX plays_by_player_day ON plays(player_id, day);

-- Unlimited play: at most one row per player, the first grant (later grants change nothing).
CREATE TABLE unlimited_entitlements (
    player_id INTEGER PRIMARY KEY REFERENCES players(id) ON DELETE CASCADE,
    -- What granted it: an unlock code, a paid order, or the operator's CLI.
    source TEXT NOT NULL CHECK (source IN ('code', 'order', 'operator')),
    -- The code, the order's public id, or the operator's note.
    reference TEXT NOT NULL,
    granted_at TEXT NOT NULL
) STRICT;

-- Codes the operator creates. `code` is the normalised form: A-Z and 0-9 only, 4 to 32 long.
CREATE TABLE promo_codes (
    id INTEGER PRIMARY KEY,
    code TEXT NOT NULL UNIQUE CHECK (length(code) BETWEEN 4 AND 32 AND code NOT GLOB '*[^A-Z0-9]*'),
    -- 'discount': the price of unlimited play while the code is live; 'unlock': unlimited play.
    kind TEXT NOT NULL CHECK (kind IN ('discount', 'unlock')),
    price_minor INTEGER CHECK (price_minor > 0),
    currency TEXT CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    starts_at TEXT,
    expires_at TEXT,
    max_redemptions INTEGER CHECK (max_redemptions > 0),
    -- Players who redeemed it; the CHECK makes an over-cap redemption impossible, whatever the code.
    redemption_count INTEGER NOT NULL DEFAULT 0
        CHECK (redemption_count >= 0 AND (max_redemptions IS NULL OR redemption_count <= max_redemptions)),
    disabled_at TEXT,
    created_at TEXT NOT NULL,
    CHECK ((kind = 'discount' AND price_minor IS NOT NULL AND currency IS NOT NULL)
        OR (kind = 'unlock' AND price_minor IS NULL AND currency IS NULL)),
    CHECK (starts_at IS NULL OR expires_at IS NULL OR starts_at < expires_at)
) STRICT;

-- Every redemption: once per player and code (a repeat returns this row, it adds none).
CREATE TABLE code_redemptions (
    id INTEGER PRIMARY KEY,
    code_id INTEGER NOT NULL REFERENCES promo_codes(id),
    player_id INTEGER NOT NULL REFERENCES players(id) ON DELETE CASCADE,
    redeemed_at TEXT NOT NULL,
    UNIQUE (code_id, player_id)
) STRICT;

-- The price due looks up a player's redeemed codes.
CREATE INDEX code_redemptions_by_player ON code_redemptions(player_id);

-- An order for unlimited play at the price due when it was made. It becomes paid only through
-- the payment provider's verified webhook or the operator's CLI. Orders are accounting records:
-- they keep their player (no cascade), so a player with orders is anonymised, not deleted.
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    -- The id the client and the payment provider see, e.g. 'ord_k3v9…': never the rowid.
    public_id TEXT NOT NULL UNIQUE CHECK (public_id GLOB 'ord_?*'),
    player_id INTEGER NOT NULL REFERENCES players(id),
    amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0),
    currency TEXT NOT NULL CHECK (currency GLOB '[A-Z][A-Z][A-Z]'),
    -- The discount code that set the amount, if any.
    discount_code_id INTEGER REFERENCES promo_codes(id),
    status TEXT NOT NULL CHECK (status IN ('pending', 'paid')),
    created_at TEXT NOT NULL,
    paid_at TEXT,
    -- The provider's event (or the operator's note) that paid it.
    provider_event_id TEXT,
    CHECK ((status = 'paid') = (paid_at IS NOT NULL AND provider_event_id IS NOT NULL))
) STRICT;

CREATE INDEX orders_by_player ON orders(player_id, status);

-- Payment provider events already handled: a replayed event id is answered without acting twice.
CREATE TABLE webhook_events (
    event_id TEXT PRIMARY KEY CHECK (event_id <> ''),
    type TEXT NOT NULL,
    order_id INTEGER REFERENCES orders(id),
    received_at TEXT NOT NULL
) STRICT;
