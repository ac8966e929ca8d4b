-- 007_seed_indexes: where market-admin seed keeps the products' indexes it builds after a
-- large load.
--
-- Maintaining nine secondary indexes row by row is most of the cost of loading a million
-- products; building them once afterwards costs about half as much (app/admin/
-- seed_indexes.c). A large seed records each index's definition here and drops it, loads,
-- then runs each definition again and deletes its row. A seed that dies in between leaves
-- the rows, and the next seed rebuilds those indexes before anything else.
CREATE TABLE seed_deferred_indexes (
    name       text PRIMARY KEY,
    definition text NOT NULL, -- pg_get_indexdef, as CREATE INDEX IF NOT EXISTS
    pages      bigint NOT NULL -- its size when set aside: the largest is built on its own
);
