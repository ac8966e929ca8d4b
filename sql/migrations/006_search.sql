-- 006_search: relevance whose cost follows the page, not the number of matches; and a
-- notification on every catalogue write, for the workers' page caches.
--
-- Relevance has two ranks (docs/api.md): 1 when the title alone matches q, 0 when only
-- title and description together do; ties by id, descending. app/api/catalogue/products_list.c
-- reads each rank in id order, either by walking the published rows of the mode in id
-- order and checking each against q (cheap when matches are dense: a common word), or
-- through a GIN index (cheap when they are rare). So it needs:
--   * title_search, the title's own tsvector (capped at 300 characters, so that it always
--     fits in a btree entry);
--   * products_search_order: (mode, id) carrying title_search, so that the walk of rank 1
--     reads the index alone (an index-only scan, no table access);
--   * products_title_search: GIN over title_search, for rare title matches.
-- The GIN index over search (001_core) serves rare matches of rank 0.

ALTER TABLE products ADD COLUMN IF NOT EXISTS title_search tsvector
    GENERATED ALWAYS AS (to_tsvector('english', left(title, 300))) STORED;

CREATE INDEX IF NOT EXISTS products_search_order ON products (mode, id) INCLUDE (title_search)
    WHERE status = 'published';
CREATE INDEX IF NOT EXISTS products_title_search ON products USING gin (title_search)
    WHERE status = 'published';

-- Every worker keeps the catalogue pages it answered for about a second and LISTENs on
-- market_catalogue: a write to what those pages show clears every worker's cache at
-- once. One notification per statement (and PostgreSQL folds repeats within a
-- transaction), so a seed of a million rows sends a handful. ENABLE ALWAYS: the seed and
-- bulk imports write with session_replication_role = replica, which skips ordinary
-- triggers.
CREATE FUNCTION notify_catalogue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('market_catalogue', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER products_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON products
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalogue();
CREATE TRIGGER tiers_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tiers
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalogue();
CREATE TRIGGER sellers_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sellers
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalogue();
CREATE TRIGGER reviews_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON reviews
    FOR EACH STATEMENT EXECUTE FUNCTION notify_catalogue();
ALTER TABLE products ENABLE ALWAYS TRIGGER products_notify;
ALTER TABLE tiers ENABLE ALWAYS TRIGGER tiers_notify;
ALTER TABLE sellers ENABLE ALWAYS TRIGGER sellers_notify;
ALTER TABLE reviews ENABLE ALWAYS TRIGGER reviews_notify;
