-- 002_webhooks: subscriptions and the transactional outbox (events and deliveries).
--
-- Events are written by triggers in the same transaction as the change that causes them
-- (see 003_event_triggers.sql), with one delivery row per matching subscription, so an
-- event exists if and only if its cause committed. market-webhookd drains deliveries.

CREATE TABLE webhook_subscriptions (
    id            text COLLATE "C" PRIMARY KEY CHECK (id ~ '^we_[A-Za-z0-9_]{1,60}$'),
    account_id    text COLLATE "C" NOT NULL REFERENCES accounts (id),
    mode          text NOT NULL CHECK (mode IN ('live', 'test')),
    url           text NOT NULL CHECK (length(url) <= 2048),
    events        text[] NOT NULL CHECK (cardinality(events) > 0 AND events <@
                      ARRAY['sale.completed', 'sale.refunded', 'review.created', 'payout.sent']),
    description   text NOT NULL DEFAULT '',
    -- whsec_ secret, sealed with AES-256-GCM under a key derived from the server secret.
    secret_sealed text NOT NULL,
    status        text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_subscriptions_account ON webhook_subscriptions (account_id, mode)
    WHERE status = 'enabled';

-- One row per event and recipient account. body is the exact JSON payload that is
-- signed and sent, fixed at creation so that every retry sends the same bytes.
CREATE TABLE events (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^evt_[A-Za-z0-9_]{1,60}$'),
    mode       text NOT NULL CHECK (mode IN ('live', 'test')),
    account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
    type       text NOT NULL CHECK (type IN ('sale.completed', 'sale.refunded',
                                             'review.created', 'payout.sent')),
    body       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX events_account ON events (account_id, mode, created_at);

CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        text COLLATE "C" NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    subscription_id text COLLATE "C" NOT NULL REFERENCES webhook_subscriptions (id)
                        ON DELETE CASCADE,
    status          text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- A drainer that claims a delivery sets lease_until; until then no other drainer
    -- takes it. A drainer that dies simply lets the lease run out.
    lease_until     timestamptz,
    leased_by       text,
    last_status     integer,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    delivered_at    timestamptz,
    UNIQUE (event_id, subscription_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';

-- Every attempt, successful or not.
CREATE TABLE webhook_attempts (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL,
    duration_ms  integer NOT NULL,
    http_status  integer,
    error        text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at);
