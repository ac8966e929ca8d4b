/* seed: the products' secondary indexes built once after a large load.
 *
 * Each row a seed writes would otherwise update nine indexes (the list orders, the
 * search vectors), which is most of the load's cost; PostgreSQL builds an index over
 * rows already there by sorting them, for much less. So a large seed sets the
 * indexes aside first: their definitions go to seed_deferred_indexes (007_seed_indexes.sql)
 * and the indexes are dropped, in one transaction. After the load, each definition runs
 * again (as CREATE INDEX IF NOT EXISTS) and its row is deleted: the largest index on a
 * second connection, the others meanwhile on the first, so both cores build.
 *
 * Lists and searches are slow while a large seed runs (their indexes are missing); the
 * product ids and every constraint stay in force throughout. A seed that dies before the
 * rebuild leaves the rows, and the next seed rebuilds from them before anything else. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "db_async.h"
#include "progress.h"
#include "seed.h"

/* One seed at a time sets indexes aside, whatever its mode. (Rebuilds need no lock: a
 * seed rebuilds only under its mode's lock, and IF NOT EXISTS makes a repeat harmless.) */
#define INDEX_LOCK "SELECT pg_advisory_xact_lock(hashtext('market-admin seed indexes'))"

static const char *const set_aside_sql[] = {
    INDEX_LOCK,
    "INSERT INTO seed_deferred_indexes (name, definition, pages)"
    " SELECT c.relname,"
    "        regexp_replace(pg_get_indexdef(i.indexrelid), '^CREATE INDEX ',"
    "                       'CREATE INDEX IF NOT EXISTS '),"
    "        pg_relation_size(i.indexrelid) / 8192"
    "   FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
    "  WHERE i.indrelid = 'products'::regclass AND NOT i.indisunique AND NOT i.indisprimary"
    " ON CONFLICT (name) DO NOTHING",
    /* Identifiers quoted by the server (%I): no name is spliced into SQL here. */
    "DO $$ DECLARE r record; BEGIN"
    "  FOR r IN SELECT name FROM seed_deferred_indexes LOOP"
    "    EXECUTE format('DROP INDEX IF EXISTS %I', r.name);"
    "  END LOOP; END $$",
};

void seed_indexes_set_aside(db *d)
{
    sql_begin(d, "seed", DB_READ_COMMITTED);
    for (size_t i = 0; i < sizeof set_aside_sql / sizeof set_aside_sql[0]; i++)
        sql_do(d, "seed", set_aside_sql[i], 0, NULL);
    sql_commit(d, "seed");
}

/* Runs one recorded definition and forgets it, in one transaction. */
static void rebuild_one(db *d, const char *name, const char *definition)
{
    const char *params[] = {name};
    sql_begin(d, "seed", DB_READ_COMMITTED);
    sql_do(d, "seed", definition, 0, NULL);
    sql_do(d, "seed", "DELETE FROM seed_deferred_indexes WHERE name = $1", 1, params);
    sql_commit(d, "seed");
}

/* Starts one rebuild on c without waiting for it. */
static void rebuild_start(db *d, const char *definition)
{
    if (!db_send_script(d, definition))
        fail("seed: %s", db_error(d));
}

/* Waits for the rebuild started on c, then forgets its definition. */
static void rebuild_finish(db *d, const char *name)
{
    db_result *res = db_receive(d, -1);
    if (!db_ok(res))
        fail("seed: rebuilding index %s: %s", name, res != NULL ? db_message(res) : db_error(d));
    db_clear(res);
    const char *params[] = {name};
    sql_do(d, "seed", "DELETE FROM seed_deferred_indexes WHERE name = $1", 1, params);
}

int seed_indexes_restore(db *d)
{
    db_result *rows = sql_run(d, "seed",
                              "SELECT name, definition FROM seed_deferred_indexes"
                              " ORDER BY pages DESC, name",
                              0, NULL);
    int n = db_rows(rows);
    if (n > 0) {
        char note[96];
        snprintf(note, sizeof note, "seed: building the catalogue's %d deferred indexes", n);
        progress_note(note);
        /* The largest on a connection of its own, started first; the rest here. */
        market_config cfg;
        db *side = admin_connect(0, &cfg);
        rebuild_start(side, db_text(rows, 0, 1));
        for (int i = 1; i < n; i++)
            rebuild_one(d, db_text(rows, i, 0), db_text(rows, i, 1));
        rebuild_finish(side, db_text(rows, 0, 0));
        db_close(side);
    }
    db_clear(rows);
    return n;
}
