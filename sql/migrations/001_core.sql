-- 001_core: accounts, the catalogue, API keys, rate limits, orders and downloads.
--
-- Conventions:
--   * identifiers are text with a type prefix and the "C" collation, so that keyset
--     pagination compares them byte by byte whatever the database's locale is;
--   * money is integer minor units (price_minor) plus the currency's exponent;
--   * every row that belongs to one side of an account carries mode ('live'/'test').

CREATE TABLE currencies (
    code     char(3) PRIMARY KEY,
    exponent smallint NOT NULL CHECK (exponent BETWEEN 0 AND 4)
);

INSERT INTO currencies (code, exponent) VALUES
    ('USD', 2), ('EUR', 2), ('GBP', 2), ('CHF', 2), ('CAD', 2), ('AUD', 2), ('NZD', 2),
    ('SEK', 2), ('NOK', 2), ('DKK', 2), ('PLN', 2), ('CZK', 2), ('BRL', 2), ('MXN', 2),
    ('INR', 2), ('CNY', 2), ('HKD', 2), ('SGD', 2), ('ZAR', 2), ('TRY', 2), ('ILS', 2),
    ('JPY', 0), ('KRW', 0), ('ISK', 0), ('CLP', 0), ('VND', 0),
    ('KWD', 3), ('BHD', 3), ('JOD', 3), ('OMR', 3), ('TND', 3);

CREATE TABLE accounts (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^acct_[A-Za-z0-9_]{1,60}$'),
    email      text,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A seller profile is shared by both modes; its catalogue is per mode.
CREATE TABLE sellers (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
    name       text NOT NULL,
    bio        text NOT NULL DEFAULT '',
    website    text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sellers_account ON sellers (account_id);

CREATE TABLE products (
    id              text COLLATE "C" PRIMARY KEY CHECK (id ~ '^prod_[A-Za-z0-9_]{1,60}$'),
    mode            text NOT NULL CHECK (mode IN ('live', 'test')),
    seller_id       text COLLATE "C" NOT NULL REFERENCES sellers (id),
    title           text NOT NULL,
    description     text NOT NULL DEFAULT '',
    category        text COLLATE "C" NOT NULL CHECK (category ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
    currency        char(3) NOT NULL REFERENCES currencies (code),
    exponent        smallint NOT NULL,
    status          text NOT NULL CHECK (status IN ('published', 'draft', 'archived')),
    -- The lowest tier price, kept by market-admin whenever it writes tiers (no route writes
    -- listings). price is the same value in major units, the key of the price sorts.
    min_price_minor bigint NOT NULL DEFAULT 0 CHECK (min_price_minor >= 0),
    price           numeric GENERATED ALWAYS AS
                        (min_price_minor::numeric / power(10::numeric, exponent::numeric)) STORED,
    search          tsvector GENERATED ALWAYS AS
                        (setweight(to_tsvector('english', title), 'A') ||
                         setweight(to_tsvector('english', description), 'B')) STORED,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One index per (filter, sort) the list route serves; all partial on published rows, all
-- ending in id so that the keyset order is total and the index gives it directly.
CREATE INDEX products_newest ON products (mode, created_at, id)
    WHERE status = 'published';
CREATE INDEX products_category_newest ON products (mode, category, created_at, id)
    WHERE status = 'published';
CREATE INDEX products_seller_newest ON products (mode, seller_id, created_at, id)
    WHERE status = 'published';
CREATE INDEX products_price ON products (mode, price, id)
    WHERE status = 'published';
CREATE INDEX products_category_price ON products (mode, category, price, id)
    WHERE status = 'published';
CREATE INDEX products_seller_price ON products (mode, seller_id, price, id)
    WHERE status = 'published';
CREATE INDEX products_search ON products USING gin (search)
    WHERE status = 'published';

CREATE TABLE tiers (
    id          text COLLATE "C" PRIMARY KEY CHECK (id ~ '^tier_[A-Za-z0-9_]{1,60}$'),
    product_id  text COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    price_minor bigint NOT NULL CHECK (price_minor >= 0),
    licence     jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX tiers_product ON tiers (product_id, price_minor, id);

CREATE TABLE files (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^file_[A-Za-z0-9_]{1,60}$'),
    product_id text COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    filename   text NOT NULL,
    path       text NOT NULL,
    size_bytes bigint NOT NULL CHECK (size_bytes >= 0)
);
CREATE INDEX files_product ON files (product_id, id);

CREATE TABLE reviews (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^rev_[A-Za-z0-9_]{1,60}$'),
    mode       text NOT NULL CHECK (mode IN ('live', 'test')),
    product_id text COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
    rating     smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reviews_product ON reviews (product_id);

-- API keys: only the SHA-256 of the whole key is stored, plus its first 12 characters
-- for display. expires_at is set by rotation (now + grace); revoked_at by revocation.
CREATE TABLE api_keys (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key_hash    bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    prefix      text NOT NULL,
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id),
    mode        text NOT NULL CHECK (mode IN ('live', 'test')),
    access      text NOT NULL CHECK (access IN ('read-only', 'read-write')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    revoked_at  timestamptz,
    replaced_by bigint REFERENCES api_keys (id)
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

-- Fixed-window request counters shared by every worker on every host. Unlogged: a crash
-- of the database forgets at most one minute of counts, which is harmless, and writes
-- skip the WAL on the hottest statement of the API.
CREATE UNLOGGED TABLE rate_counters (
    key_id bigint NOT NULL,
    window_start bigint NOT NULL, -- floor(unix epoch / 60)
    count  integer NOT NULL,
    PRIMARY KEY (key_id, window_start)
);

CREATE TABLE orders (
    id          text COLLATE "C" PRIMARY KEY CHECK (id ~ '^ord_[A-Za-z0-9_]{1,60}$'),
    mode        text NOT NULL CHECK (mode IN ('live', 'test')),
    account_id  text COLLATE "C" NOT NULL REFERENCES accounts (id),
    status      text NOT NULL CHECK (status IN ('pending', 'paid', 'refunded')),
    currency    char(3) NOT NULL REFERENCES currencies (code),
    created_at  timestamptz NOT NULL DEFAULT now(),
    paid_at     timestamptz,
    refunded_at timestamptz
);
CREATE INDEX orders_account_newest ON orders (account_id, mode, created_at, id);
CREATE INDEX orders_account_status_newest ON orders (account_id, mode, status, created_at, id);

-- What was bought, as it was at purchase (title, tier name and price are copies).
CREATE TABLE order_items (
    order_id    text COLLATE "C" NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position    smallint NOT NULL,
    product_id  text COLLATE "C" NOT NULL REFERENCES products (id),
    tier_id     text COLLATE "C" NOT NULL REFERENCES tiers (id),
    title       text NOT NULL,
    tier_name   text NOT NULL,
    price_minor bigint NOT NULL CHECK (price_minor >= 0),
    PRIMARY KEY (order_id, position)
);
CREATE INDEX order_items_product ON order_items (product_id);

-- One download per (order item, file of its product).
CREATE TABLE downloads (
    id         text COLLATE "C" PRIMARY KEY CHECK (id ~ '^dl_[A-Za-z0-9_]{1,60}$'),
    order_id   text COLLATE "C" NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position   smallint NOT NULL,
    file_id    text COLLATE "C" NOT NULL REFERENCES files (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (order_id, position, file_id)
);
CREATE INDEX downloads_order ON downloads (order_id, position, file_id);

-- Minted download links. The token itself is never stored: only its SHA-256.
CREATE TABLE download_tokens (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    download_id text COLLATE "C" NOT NULL REFERENCES downloads (id) ON DELETE CASCADE,
    token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX download_tokens_download ON download_tokens (download_id, expires_at DESC);

CREATE TABLE payouts (
    id           text COLLATE "C" PRIMARY KEY CHECK (id ~ '^po_[A-Za-z0-9_]{1,60}$'),
    mode         text NOT NULL CHECK (mode IN ('live', 'test')),
    seller_id    text COLLATE "C" NOT NULL REFERENCES sellers (id),
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency     char(3) NOT NULL REFERENCES currencies (code),
    status       text NOT NULL CHECK (status IN ('pending', 'sent')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    sent_at      timestamptz
);

-- Idempotency-Key records of the POST routes, per API key. A row is claimed (status 0)
-- by the first request inside its transaction, so a racing twin waits on the row lock
-- and then replays the stored response.
CREATE TABLE idempotency_keys (
    api_key_id   bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    idem_key     text COLLATE "C" NOT NULL,
    route        text NOT NULL,
    request_hash bytea NOT NULL,
    status       smallint NOT NULL,
    body         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_key_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
