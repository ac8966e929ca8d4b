-- 010_covering_pages: a list page read from its index alone.
--
-- A page of the list route (and of a seller's catalogue) reads its rows through the
-- (filter, sort) index made for it (001_core.sql), then fetched each row from the table:
-- a table page per item, most of the statement's cost (about 2.5 times the cost of the
-- same page read from the index alone, measured with pgbench on a million products).
-- Each of those indexes now carries the item's columns (an INCLUDE), so that the page is
-- an index-only scan: the table is not read for rows on all-visible pages, which a
-- catalogue mostly is (market-admin seed ends with VACUUM; autovacuum does it after
-- other writes).
--
-- The title has no length limit, and a btree entry must fit in a third of a page, so the
-- index carries title_head: the title when it is at most 1,024 bytes (any real title),
-- else NULL. The item's title is coalesce(title_head, the title read by id): a title
-- longer than that costs one more lookup, in that row alone (PRODUCT_ITEM_COLUMNS,
-- app/api/catalogue/catalogue.h).
--
-- Adding the stored column rewrites the table (about a minute per million products); the
-- six indexes are dropped first so that the rewrite does not rebuild them twice. A seed
-- that died while it had set them aside (007_seed_indexes.sql) recorded the old
-- definitions: those rows go, the indexes below replace them.
DROP INDEX IF EXISTS products_newest, products_category_newest, products_seller_newest,
    products_price, products_category_price, products_seller_price;
DELETE FROM seed_deferred_indexes
 WHERE name IN ('products_newest', 'products_category_newest', 'products_seller_newest',
                'products_price', 'products_category_price', 'products_seller_price');

ALTER TABLE products ADD COLUMN title_head text
    GENERATED ALWAYS AS (CASE WHEN octet_length(title) <= 1024 THEN title END) STORED;

CREATE INDEX products_newest ON products (mode, created_at, id)
    INCLUDE (title_head, min_price_minor, exponent, seller_id) WHERE status = 'published';
CREATE INDEX products_category_newest ON products (mode, category, created_at, id)
    INCLUDE (title_head, min_price_minor, exponent, seller_id) WHERE status = 'published';
CREATE INDEX products_seller_newest ON products (mode, seller_id, created_at, id)
    INCLUDE (title_head, min_price_minor, exponent) WHERE status = 'published';
CREATE INDEX products_price ON products (mode, price, id)
    INCLUDE (title_head, min_price_minor, exponent, seller_id) WHERE status = 'published';
CREATE INDEX products_category_price ON products (mode, category, price, id)
    INCLUDE (title_head, min_price_minor, exponent, seller_id) WHERE status = 'published';
CREATE INDEX products_seller_price ON products (mode, seller_id, price, id)
    INCLUDE (title_head, min_price_minor, exponent) WHERE status = 'published';
