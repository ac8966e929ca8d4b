-- 017_list_items: a list item's JSON written once, when the product is written, instead
-- of on every page that shows it.
--
-- A list page is read from its index alone (010_covering_pages.sql). Each row still cost
-- five output conversions in PostgreSQL (id, title, price in minor units, exponent,
-- seller) and, in the worker, the JSON escaping of three strings and the formatting of a
-- price: per item, the largest part of both processes' time on a page of 100 (perf over
-- the long-tail and mirror benchmarks). The indexes now carry list_item instead: the
-- item's members after its id, as JSON text ("title":"...","price":19.99,"seller":"..."),
-- which the worker copies between {"id":"..." and } (catalogue_write_item).
--
-- market_item_members is that text. The price is written as money_format writes it
-- (lib/money.c): the major units with no trailing fractional zeros, trim_scale of the
-- exact decimal that the price column holds. Strings are escaped by to_json. It is
-- IMMUTABLE (a generated column needs it): text and numeric output depend on no setting.
--
-- A btree entry must fit in a third of a page, so list_item is NULL when the members are
-- longer than 1,536 bytes (a title over about 1,400 bytes, or shorter with characters
-- escaped six bytes long); such an item is made from its row, read by id, in that row
-- alone (PRODUCT_ITEM_COLUMNS, app/api/catalogue/catalogue.h). title_head, which the indexes
-- carried for the same reason, goes.
--
-- Adding the stored column rewrites the table (about a minute per million products), so
-- the six indexes are dropped first and made again after it, as in 010; a seed that died
-- while it had set them aside recorded the old definitions: those rows go.
CREATE FUNCTION market_item_members(title text, price_minor bigint, exponent smallint,
                                    seller_id text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '"title":' || to_json(title)::text
    || ',"price":' || trim_scale(price_minor::numeric / power(10::numeric, exponent::numeric))::text
    || ',"seller":' || to_json(seller_id)::text;

DROP INDEX IF EXISTS products_newest, products_category_newest, products_seller_newest,
    products_price, products_category_price, products_seller_price;
DELETE FROM seed_deferred_indexes
 WHERE name IN ('products_newest', 'products_category_newest', 'products_seller_newest',
                'products_price', 'products_category_price', 'products_seller_price');

ALTER TABLE products DROP COLUMN title_head;
ALTER TABLE products ADD COLUMN list_item text GENERATED ALWAYS AS (
    CASE WHEN octet_length(market_item_members(title, min_price_minor, exponent, seller_id)) <= 1536
         THEN market_item_members(title, min_price_minor, exponent, seller_id) END) STORED;

CREATE INDEX products_newest ON products (mode, created_at, id)
    INCLUDE (list_item) WHERE status = 'published';
CREATE INDEX products_category_newest ON products (mode, category, created_at, id)
    INCLUDE (list_item) WHERE status = 'published';
CREATE INDEX products_seller_newest ON products (mode, seller_id, created_at, id)
    INCLUDE (list_item) WHERE status = 'published';
CREATE INDEX products_price ON products (mode, price, id)
    INCLUDE (list_item) WHERE status = 'published';
CREATE INDEX products_category_price ON products (mode, category, price, id)
    INCLUDE (list_item) WHERE status = 'published';
CREATE INDEX products_seller_price ON products (mode, seller_id, price, id)
    INCLUDE (list_item) WHERE status = 'published';
