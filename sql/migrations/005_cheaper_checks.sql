-- 005_cheaper_checks: the same id and slug rules, checked more cheaply; two missing
-- indexes on the referencing side of foreign keys.
--
-- PostgreSQL's regex engine expands a bounded repetition such as {1,60} into that many
-- states, which makes the CHECKs of 001_core.sql and 002_webhooks.sql a visible part of
-- every insert (about 8x the cost of the form below when seeding a million products).
-- '^prefix_[A-Za-z0-9_]+$' AND length(id) <= N accepts exactly the same values: the
-- characters allowed are ASCII, so length() counts bytes, and N is the prefix plus 60
-- (a slug: 1 + 39). Re-adding a CHECK validates the existing rows once.
--
-- order_items (tier_id) and downloads (file_id) reference tiers and files without an
-- index: deleting a tier or a file (every product deleted by seed --replace cascades to
-- both) scanned the whole of order_items or downloads once per row.

ALTER TABLE accounts DROP CONSTRAINT accounts_id_check,
    ADD CONSTRAINT accounts_id_check CHECK (id ~ '^acct_[A-Za-z0-9_]+$' AND length(id) <= 65);
ALTER TABLE sellers DROP CONSTRAINT sellers_id_check,
    ADD CONSTRAINT sellers_id_check CHECK (id ~ '^[a-z0-9][a-z0-9_-]*$' AND length(id) <= 40);
ALTER TABLE products DROP CONSTRAINT products_id_check,
    ADD CONSTRAINT products_id_check CHECK (id ~ '^prod_[A-Za-z0-9_]+$' AND length(id) <= 65),
    DROP CONSTRAINT products_category_check,
    ADD CONSTRAINT products_category_check
        CHECK (category ~ '^[a-z0-9][a-z0-9-]*$' AND length(category) <= 40);
ALTER TABLE tiers DROP CONSTRAINT tiers_id_check,
    ADD CONSTRAINT tiers_id_check CHECK (id ~ '^tier_[A-Za-z0-9_]+$' AND length(id) <= 65);
ALTER TABLE files DROP CONSTRAINT files_id_check,
    ADD CONSTRAINT files_id_check CHECK (id ~ '^file_[A-Za-z0-9_]+$' AND length(id) <= 65);
ALTER TABLE reviews DROP CONSTRAINT reviews_id_check,
    ADD CONSTRAINT reviews_id_check CHECK (id ~ '^rev_[A-Za-z0-9_]+$' AND length(id) <= 64);
ALTER TABLE orders DROP CONSTRAINT orders_id_check,
    ADD CONSTRAINT orders_id_check CHECK (id ~ '^ord_[A-Za-z0-9_]+$' AND length(id) <= 64);
ALTER TABLE downloads DROP CONSTRAINT downloads_id_check,
    ADD CONSTRAINT downloads_id_check CHECK (id ~ '^dl_[A-Za-z0-9_]+$' AND length(id) <= 63);
ALTER TABLE payouts DROP CONSTRAINT payouts_id_check,
    ADD CONSTRAINT payouts_id_check CHECK (id ~ '^po_[A-Za-z0-9_]+$' AND length(id) <= 63);
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_id_check,
    ADD CONSTRAINT webhook_subscriptions_id_check
        CHECK (id ~ '^we_[A-Za-z0-9_]+$' AND length(id) <= 63);
ALTER TABLE events DROP CONSTRAINT events_id_check,
    ADD CONSTRAINT events_id_check CHECK (id ~ '^evt_[A-Za-z0-9_]+$' AND length(id) <= 64);

CREATE INDEX order_items_tier ON order_items (tier_id);
CREATE INDEX downloads_file ON downloads (file_id);
