-- 0006_order_checkout: orders paid through the payment provider's hosted checkout (issue 12).
-- Never edit this file once released: add a new migration instead.
-- Times are ISO-8601 UTC text to the second, e.g. '2026-01-15T10:23:45Z'.

-- The provider's checkout session for the order (its id, e.g. 'cs_test_a1…', the page the
-- player pays on, and when the provider stops taking payment there). NULL for orders made
-- before this migration or without a provider.
ALTER TABLE orders ADD COLUMN checkout_session_id TEXT CHECK (checkout_session_id <> '');
ALTER TABLE orders ADD COLUMN checkout_url TEXT CHECK (checkout_url <> '');
ALTER TABLE orders ADD COLUMN checkout_expires_at TEXT;

-- When the player cancelled the order. A cancelled order stays 'pending' in `status` (the
-- CHECK on status cannot change in place, and a late payment must still be able to pay it:
-- the money was taken) and is shown as cancelled while it is unpaid.
ALTER TABLE orders ADD COLUMN cancelled_at TEXT;

CREATE UNIQUE INDEX orders_by_checkout_session ON orders(checkout_session_id) WHERE checkout_session_id IS NOT NULL;
