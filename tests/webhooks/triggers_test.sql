-- Checks of the event triggers (003_event_triggers.sql and the migrations after it).
-- tests/webhooks/run.sh (make triggers-test) runs it against a scratch database with every
-- migration:
--   psql -X -v ON_ERROR_STOP=1 -d DB -f tests/webhooks/triggers_test.sql
-- Every check is an assertion; the script stops at the first failure.
\set QUIET on
\o /dev/null
SET client_min_messages = warning;

CREATE FUNCTION pg_temp.expect(label text, got bigint, want bigint) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF got IS DISTINCT FROM want THEN
        RAISE EXCEPTION 'FAIL %: got %, want %', label, got, want;
    END IF;
    RAISE NOTICE 'ok %', label;
END $$;
CREATE FUNCTION pg_temp.expect_text(label text, got text, want text) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF got IS DISTINCT FROM want THEN
        RAISE EXCEPTION 'FAIL %: got %, want %', label, got, want;
    END IF;
    RAISE NOTICE 'ok %', label;
END $$;
SET client_min_messages = notice;

-- Fixtures: two sellers (ann, cy), one buyer (bob).
INSERT INTO accounts (id) VALUES ('acct_ann'), ('acct_cy'), ('acct_bob'), ('acct_dee');
INSERT INTO sellers (id, account_id, name) VALUES ('pixelforge', 'acct_ann', 'Pixel Forge'),
                                                  ('cyfonts', 'acct_cy', 'Cy Fonts'),
                                                  ('deeshop', 'acct_dee', 'Dee');
INSERT INTO products (id, mode, seller_id, title, category, currency, exponent, status) VALUES
    ('prod_a', 'test', 'pixelforge', 'A', 'fonts', 'USD', 2, 'published'),
    ('prod_c', 'test', 'cyfonts', 'C', 'fonts', 'USD', 2, 'published'),
    ('prod_d', 'test', 'deeshop', 'D', 'fonts', 'USD', 2, 'published'),
    ('prod_j', 'test', 'pixelforge', 'J', 'fonts', 'JPY', 0, 'published'),
    ('prod_k', 'test', 'pixelforge', 'K', 'fonts', 'KWD', 3, 'published'),
    ('prod_live', 'live', 'pixelforge', 'L', 'fonts', 'USD', 2, 'published');
INSERT INTO tiers (id, product_id, name, price_minor) VALUES
    ('tier_a', 'prod_a', 'Personal', 1999), ('tier_c', 'prod_c', 'Team', 500),
    ('tier_d', 'prod_d', 'X', 100),
    ('tier_j', 'prod_j', 'Yen', 1200), ('tier_k', 'prod_k', 'Dinar', 1500),
    ('tier_live', 'prod_live', 'Live', 120050);
-- ann: test sub for everything, test sub for reviews only, a disabled test sub, a live sub.
-- cy: test sub for sales. dee: no subscription at all.
INSERT INTO webhook_subscriptions (id, account_id, mode, url, events, secret_sealed, status) VALUES
    ('we_ann_all', 'acct_ann', 'test', 'https://a.example/h',
     ARRAY['sale.completed', 'sale.refunded', 'review.created', 'payout.sent'], 'x', 'enabled'),
    ('we_ann_rev', 'acct_ann', 'test', 'https://a.example/r', ARRAY['review.created'], 'x', 'enabled'),
    ('we_ann_off', 'acct_ann', 'test', 'https://a.example/o',
     ARRAY['sale.completed', 'review.created'], 'x', 'disabled'),
    ('we_ann_live', 'acct_ann', 'live', 'https://a.example/l', ARRAY['sale.completed'], 'x', 'enabled'),
    ('we_cy', 'acct_cy', 'test', 'https://c.example/h', ARRAY['sale.completed', 'sale.refunded'], 'x', 'enabled');

-- 1. Import path: order inserted as paid, items inserted after it, one transaction.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_1', 'test', 'acct_bob', 'paid', 'USD');
SELECT pg_temp.expect('no event before commit', (SELECT count(*) FROM events), 0);
INSERT INTO order_items (order_id, position, product_id, tier_id, title, tier_name, price_minor) VALUES
    ('ord_1', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999),
    ('ord_1', 2, 'prod_c', 'tier_c', 'C', 'Team', 500),
    ('ord_1', 3, 'prod_d', 'tier_d', 'D', 'X', 100);
COMMIT;
SELECT pg_temp.expect('import: one event per item whose seller subscribed',
    (SELECT count(*) FROM events WHERE type = 'sale.completed' AND body LIKE '%"order":"ord_1"%'), 2);
SELECT pg_temp.expect('import: ann event to ann',
    (SELECT count(*) FROM events WHERE account_id = 'acct_ann' AND body LIKE '%"product":"prod_a"%'), 1);
SELECT pg_temp.expect('import: cy event to cy',
    (SELECT count(*) FROM events WHERE account_id = 'acct_cy' AND body LIKE '%"product":"prod_c"%'), 1);
SELECT pg_temp.expect('import: deliveries (ann_all, cy; not disabled, not live, not reviews-only)',
    (SELECT count(*) FROM webhook_deliveries), 2);
SELECT pg_temp.expect_text('import: delivery subscriptions',
    (SELECT string_agg(subscription_id, ',' ORDER BY subscription_id) FROM webhook_deliveries), 'we_ann_all,we_cy');
SELECT pg_temp.expect_text('payload of ann''s sale',
    (SELECT regexp_replace(body, '"(id|created_at)":"[^"]*"', '"\1":"X"', 'g') FROM events WHERE account_id = 'acct_ann'),
    '{"id":"X","type":"sale.completed","created_at":"X","livemode":false,"data":{"order":"ord_1","product":"prod_a","tier":"tier_a","amount":19.99,"currency":"USD"}}');
SELECT pg_temp.expect('payload is JSON with evt_ id and RFC 3339 time',
    (SELECT count(*) FROM events WHERE body::jsonb->>'id' = id AND id ~ '^evt_[0-9a-f]{32}$'
        AND body::jsonb->>'created_at' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$'), 2);
SELECT pg_temp.expect_text('cy amount 5', (SELECT body::jsonb->'data'->>'amount' FROM events WHERE account_id = 'acct_cy'), '5');

-- 2. A rolled back paid order leaves nothing.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_rb', 'test', 'acct_bob', 'paid', 'USD');
INSERT INTO order_items VALUES ('ord_rb', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999);
ROLLBACK;
SELECT pg_temp.expect('rollback: no event', (SELECT count(*) FROM events WHERE body LIKE '%ord_rb%'), 0);

-- 3. pending, then UPDATE to paid (autocommit statements).
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_2', 'test', 'acct_bob', 'pending', 'JPY');
INSERT INTO order_items VALUES ('ord_2', 1, 'prod_j', 'tier_j', 'J', 'Yen', 1200);
SELECT pg_temp.expect('pending: no event', (SELECT count(*) FROM events WHERE body LIKE '%ord_2%'), 0);
UPDATE orders SET status = 'paid', paid_at = now() WHERE id = 'ord_2';
SELECT pg_temp.expect_text('pending->paid: JPY amount 1200',
    (SELECT body::jsonb->'data'->>'amount' FROM events WHERE body LIKE '%"ord_2"%' AND type = 'sale.completed'), '1200');
-- Setting paid again (a re-import upsert) announces nothing new.
UPDATE orders SET status = 'paid' WHERE id = 'ord_2';
SELECT pg_temp.expect('paid->paid: no second event', (SELECT count(*) FROM events WHERE body LIKE '%"ord_2"%'), 1);

-- 4. KWD exponent 3.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_3', 'test', 'acct_bob', 'paid', 'KWD');
INSERT INTO order_items VALUES ('ord_3', 1, 'prod_k', 'tier_k', 'K', 'Dinar', 1500);
COMMIT;
SELECT pg_temp.expect_text('KWD 1500 -> 1.5',
    (SELECT substring(body from '"amount":([^,]*),') FROM events WHERE body LIKE '%"ord_3"%'), '1.5');

-- 5. Refund: sale.refunded per item, to each seller that asked for it.
UPDATE orders SET status = 'refunded', refunded_at = now() WHERE id = 'ord_1';
SELECT pg_temp.expect('refund: ann and cy',
    (SELECT count(*) FROM events WHERE type = 'sale.refunded' AND body LIKE '%"ord_1"%'), 2);
SELECT pg_temp.expect_text('refund payload amount',
    (SELECT body::jsonb->'data'->>'amount' FROM events WHERE type = 'sale.refunded' AND account_id = 'acct_ann'), '19.99');
-- An order inserted as refunded announces nothing.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_4', 'test', 'acct_bob', 'refunded', 'USD');
INSERT INTO order_items VALUES ('ord_4', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999);
COMMIT;
SELECT pg_temp.expect('insert refunded: nothing', (SELECT count(*) FROM events WHERE body LIKE '%"ord_4"%'), 0);
-- Paid and refunded in one transaction: both events, in that order.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_5', 'test', 'acct_bob', 'paid', 'USD');
INSERT INTO order_items VALUES ('ord_5', 1, 'prod_c', 'tier_c', 'C', 'Team', 500);
UPDATE orders SET status = 'refunded' WHERE id = 'ord_5';
COMMIT;
SELECT pg_temp.expect_text('paid+refunded in one txn',
    (SELECT string_agg(type, ',' ORDER BY created_at) FROM events WHERE body LIKE '%"ord_5"%'),
    'sale.completed,sale.refunded');

-- 6. Modes never cross: a live order goes only to ann's live subscription.
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_live', 'live', 'acct_bob', 'paid', 'USD');
INSERT INTO order_items VALUES ('ord_live', 1, 'prod_live', 'tier_live', 'L', 'Live', 120050);
COMMIT;
SELECT pg_temp.expect_text('live: delivered to the live subscription only',
    (SELECT string_agg(d.subscription_id, ',') FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE e.body LIKE '%"ord_live"%'), 'we_ann_live');
SELECT pg_temp.expect_text('live: livemode true, amount 1200.5',
    (SELECT substring(body from '"livemode":(true|false)') || ' ' || (body::jsonb->'data'->>'amount')
       FROM events WHERE body LIKE '%"ord_live"%'), 'true 1200.5');
SELECT pg_temp.expect('live events only in live mode',
    (SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE s.mode <> e.mode), 0);

-- 7. Reviews: to the product's seller; both of ann's enabled test subscriptions want them.
INSERT INTO reviews (id, mode, product_id, account_id, rating, body)
VALUES ('rev_1', 'test', 'prod_a', 'acct_bob', 4, 'Lovely "quotes" \ and ünïcode
new line');
SELECT pg_temp.expect_text('review deliveries',
    (SELECT string_agg(d.subscription_id, ',' ORDER BY d.subscription_id) FROM webhook_deliveries d
       JOIN events e ON e.id = d.event_id WHERE e.type = 'review.created'), 'we_ann_all,we_ann_rev');
SELECT pg_temp.expect_text('review payload round trip',
    (SELECT (body::jsonb->'data')::text FROM events WHERE type = 'review.created'),
    '{"body": "Lovely \"quotes\" \\ and ünïcode\nnew line", "rating": 4, "review": "rev_1", "product": "prod_a"}');
-- A review of cy's product: cy did not ask for reviews.
INSERT INTO reviews (id, mode, product_id, account_id, rating) VALUES ('rev_2', 'test', 'prod_c', 'acct_bob', 2);
SELECT pg_temp.expect('review for cy: nothing', (SELECT count(*) FROM events WHERE body LIKE '%rev_2%'), 0);

-- 8. Payouts: inserted as sent, or pending then sent.
INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status) VALUES ('po_1', 'test', 'pixelforge', 123456, 'EUR', 'sent');
INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status) VALUES ('po_2', 'test', 'pixelforge', 700, 'USD', 'pending');
SELECT pg_temp.expect('payout pending: nothing', (SELECT count(*) FROM events WHERE body LIKE '%"po_2"%'), 0);
UPDATE payouts SET status = 'sent', sent_at = now() WHERE id = 'po_2';
UPDATE payouts SET status = 'sent' WHERE id = 'po_2';
SELECT pg_temp.expect_text('payout payloads',
    (SELECT string_agg((body::jsonb->'data')::text, ' | ' ORDER BY created_at) FROM events WHERE type = 'payout.sent'),
    '{"amount": 1234.56, "payout": "po_1", "currency": "EUR"} | {"amount": 7, "payout": "po_2", "currency": "USD"}');
SELECT pg_temp.expect('payout deliveries only to we_ann_all',
    (SELECT count(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE e.type = 'payout.sent' AND d.subscription_id = 'we_ann_all'), 2);

-- 9. Upserts as an importer would write them (INSERT ... ON CONFLICT DO UPDATE).
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_6', 'test', 'acct_bob', 'pending', 'USD')
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status;
INSERT INTO order_items VALUES ('ord_6', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999);
COMMIT;
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_6', 'test', 'acct_bob', 'paid', 'USD')
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status;
DELETE FROM order_items WHERE order_id = 'ord_6';
INSERT INTO order_items VALUES ('ord_6', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999)
    ON CONFLICT (order_id, position) DO NOTHING;
COMMIT;
SELECT pg_temp.expect('upsert pending->paid: one event',
    (SELECT count(*) FROM events WHERE body LIKE '%"ord_6"%' AND type = 'sale.completed'), 1);
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_6', 'test', 'acct_bob', 'paid', 'USD')
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status;
DELETE FROM order_items WHERE order_id = 'ord_6';
INSERT INTO order_items VALUES ('ord_6', 1, 'prod_a', 'tier_a', 'A', 'Personal', 1999);
COMMIT;
SELECT pg_temp.expect('re-import of a paid order: no second event',
    (SELECT count(*) FROM events WHERE body LIKE '%"ord_6"%'), 1);
BEGIN;
INSERT INTO orders (id, mode, account_id, status, currency) VALUES ('ord_7', 'test', 'acct_bob', 'paid', 'USD')
    ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status;
INSERT INTO order_items VALUES ('ord_7', 1, 'prod_c', 'tier_c', 'C', 'Team', 500);
COMMIT;
SELECT pg_temp.expect('upsert inserting a paid order: one event',
    (SELECT count(*) FROM events WHERE body LIKE '%"ord_7"%'), 1);

-- 10. Every event has at least one delivery (events without a subscriber are not written).
SELECT pg_temp.expect('no event without deliveries',
    (SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)), 0);
SELECT pg_temp.expect('no delivery to a disabled subscription',
    (SELECT count(*) FROM webhook_deliveries WHERE subscription_id = 'we_ann_off'), 0);
\echo all trigger checks passed
