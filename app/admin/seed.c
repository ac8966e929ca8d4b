/* seed --mode test|live --products N [--sellers N] [--orders N] [--random-seed N]
 *      [--jobs N] [--files] [--replace] [--no-vacuum]
 *
 * Writes the catalogue of seed_catalog.c in four phases, on one connection that holds
 * the mode's advisory lock from start to end:
 *   1. accounts and sellers, shared by both modes and possibly there already, through
 *      temporary tables and INSERT ... ON CONFLICT DO NOTHING; with --replace, the
 *      mode's previous seeded orders are deleted here too. One short transaction.
 *   2. products, tiers and files in parallel slices (seed_slices.c), committed together;
 *      from SEED_DEFER_INDEXES products on, the products' secondary indexes are set aside
 *      before and rebuilt after (seed_indexes.c).
 *   3. orders, their items and downloads, which reference products of every slice. One
 *      transaction.
 *   4. VACUUM (ANALYZE), outside any transaction (--no-vacuum: ANALYZE only); then the
 *      copy of the search statistics relevance reads, brought up to date.
 * Everything but the shared rows goes straight into its table with COPY (constraints,
 * foreign keys and triggers all stay in force). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "clock.h"
#include "progress.h"
#include "seed.h"

/* --- existing seeded rows -------------------------------------------------------------- */

static bool has_seeded(db *d, const seed_plan *plan, const char *table, const char *prefix)
{
    char lo[32], hi[32], pattern[48], sql[160];
    seed_id_range(plan, prefix, 0, SEED_MAX_ROWS, lo, hi, pattern);
    /* table is one of two constants of this file, never input. */
    snprintf(sql, sizeof sql,
             "SELECT 1 FROM %s WHERE id BETWEEN $1 AND $2 AND id ~ $3 AND mode = $4 LIMIT 1",
             table);
    const char *params[] = {lo, hi, pattern, plan->mode};
    db_result *res = sql_run(d, "seed", sql, 4, params);
    bool found = db_rows(res) > 0;
    db_clear(res);
    return found;
}

/* The previous seeded products are deleted by the slices that replace them (seed_write.c);
 * the orders first, here, as their items reference products of every slice. */
static void clear_previous(db *d, const seed_plan *plan)
{
    if (!has_seeded(d, plan, "products", "prod_") && !has_seeded(d, plan, "orders", "ord_"))
        return;
    if (!plan->replace)
        fail("seed: %s mode already has seeded rows (prod_%c0000001...); use --replace to "
             "delete them first",
             plan->mode, plan->letter);
    char lo[32], hi[32], pattern[48];
    seed_id_range(plan, "ord_", 0, SEED_MAX_ROWS, lo, hi, pattern);
    const char *params[] = {lo, hi, pattern, plan->mode};
    sql_do(d, "seed --replace",
           "DELETE FROM orders WHERE id BETWEEN $1 AND $2 AND id ~ $3 AND mode = $4", 4, params);
}

/* --- shared rows: accounts and sellers ------------------------------------------------- */

static void copy_account(copy_stream *cs, const char *id, long created)
{
    char email[64], when[32];
    snprintf(email, sizeof email, "%s@example.com", id + 5);
    seed_time_text(created, when, sizeof when);
    copy_field(cs, id);
    copy_field(cs, email);
    copy_field(cs, when);
    copy_row_end(cs);
}

static void write_accounts(db *d, const seed_plan *plan)
{
    sql_do(d, "seed",
           "CREATE TEMP TABLE seed_accounts (id text, email text, created_at timestamptz)"
           " ON COMMIT DROP",
           0, NULL);
    copy_stream cs;
    copy_begin(&cs, d, "seed: accounts", "COPY seed_accounts FROM STDIN");
    for (long n = 1; n <= plan->sellers; n++) {
        seed_seller s;
        seed_make_seller(n, &s);
        copy_account(&cs, s.account, s.created);
    }
    for (long n = 1; plan->orders > 0 && n <= plan->buyers; n++) {
        char id[32];
        snprintf(id, sizeof id, "acct_buyer_%ld", n);
        copy_account(&cs, id, SEED_ANCHOR - SEED_SPAN);
    }
    copy_end(&cs);
    sql_do(d, "seed: accounts",
           "INSERT INTO accounts (id, email, created_at)"
           " SELECT id, email, created_at FROM seed_accounts"
           " ON CONFLICT (id) DO NOTHING",
           0, NULL);
}

static void write_sellers(db *d, const seed_plan *plan)
{
    sql_do(d, "seed",
           "CREATE TEMP TABLE seed_sellers (id text, account_id text, name text,"
           " bio text, website text, created_at timestamptz) ON COMMIT DROP",
           0, NULL);
    copy_stream cs;
    copy_begin(&cs, d, "seed: sellers", "COPY seed_sellers FROM STDIN");
    for (long n = 1; n <= plan->sellers; n++) {
        seed_seller s;
        seed_make_seller(n, &s);
        char when[32];
        seed_time_text(s.created, when, sizeof when);
        const char *fields[] = {s.handle, s.account, s.name, s.bio, s.website, when};
        for (size_t f = 0; f < 6; f++)
            copy_field(&cs, fields[f]);
        copy_row_end(&cs);
    }
    copy_end(&cs);
    sql_do(d, "seed: sellers",
           "INSERT INTO sellers (id, account_id, name, bio, website, created_at)"
           " SELECT id, account_id, name, bio, website, created_at"
           " FROM seed_sellers ON CONFLICT (id) DO NOTHING",
           0, NULL);
}

/* --- orders ---------------------------------------------------------------------------- */

/* The orders phase's progress: each order through three passes (orders, items,
 * downloads). */
typedef struct {
    progress bar;
    long steps, rows;
} order_progress;

static void order_done(order_progress *op, long rows)
{
    op->steps++;
    op->rows += rows;
    progress_show(&op->bar, op->steps, op->rows);
}

/* Orders go in with their final status before their items: the sale triggers of
 * 003_event_triggers.sql are deferred to commit, when the items are there. */
static void write_order_rows(db *d, const seed_plan *plan, seed_counts *counts, order_progress *op)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: orders",
               "COPY orders (id, mode, account_id, status, currency, created_at, paid_at,"
               " refunded_at) FROM STDIN");
    for (long n = 1; n <= plan->orders; n++) {
        seed_order o;
        seed_make_order(plan->seed, plan->letter, n, plan->products, plan->sellers, plan->buyers,
                        &o);
        if (o.nitems == 0) {
            order_done(op, 0);
            continue; /* nothing purchasable: a catalogue of drafts */
        }
        char buyer[32], created[32], refunded[32];
        snprintf(buyer, sizeof buyer, "acct_buyer_%ld", o.buyer);
        seed_time_text(o.created, created, sizeof created);
        /* A refund two days after the sale, or right before the anchor. */
        long refund_time =
            o.created + 2L * 86400 < SEED_ANCHOR ? o.created + 2L * 86400 : SEED_ANCHOR;
        seed_time_text(refund_time, refunded, sizeof refunded);
        const char *fields[] = {o.id,       plan->mode, buyer,   o.refunded ? "refunded" : "paid",
                                o.currency, created,    created, o.refunded ? refunded : NULL};
        for (size_t f = 0; f < 8; f++)
            copy_field(&cs, fields[f]);
        copy_row_end(&cs);
        counts->refunded += o.refunded;
        order_done(op, 1);
    }
    counts->orders = cs.rows;
    copy_end(&cs);
}

static void write_items(db *d, const seed_plan *plan, seed_counts *counts, order_progress *op)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: order items",
               "COPY order_items (order_id, position, product_id, tier_id, title, tier_name,"
               " price_minor) FROM STDIN");
    for (long n = 1; n <= plan->orders; n++) {
        seed_order o;
        seed_make_order(plan->seed, plan->letter, n, plan->products, plan->sellers, plan->buyers,
                        &o);
        for (int i = 0; i < o.nitems; i++) {
            seed_product p;
            seed_make_product(plan->seed, plan->letter, o.items[i].product, plan->products,
                              plan->sellers, &p);
            char tier[32];
            snprintf(tier, sizeof tier, "tier_%c%07ld_%d", plan->letter, o.items[i].product,
                     o.items[i].tier + 1);
            copy_field(&cs, o.id);
            copy_field_long(&cs, i);
            copy_field(&cs, p.id);
            copy_field(&cs, tier);
            copy_field(&cs, p.title);
            copy_field(&cs, seed_tier_names[o.items[i].tier]);
            copy_field_long(&cs, p.price[o.items[i].tier]);
            copy_row_end(&cs);
        }
        order_done(op, o.nitems);
    }
    counts->items = cs.rows;
    copy_end(&cs);
}

/* One file per seeded product, so one download per item: dl_<order>_<position>. */
static void write_downloads(db *d, const seed_plan *plan, seed_counts *counts, order_progress *op)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: downloads",
               "COPY downloads (id, order_id, position, file_id, created_at) FROM STDIN");
    for (long n = 1; n <= plan->orders; n++) {
        seed_order o;
        seed_make_order(plan->seed, plan->letter, n, plan->products, plan->sellers, plan->buyers,
                        &o);
        char created[32];
        seed_time_text(o.created, created, sizeof created);
        for (int i = 0; i < o.nitems; i++) {
            char id[32], file[32];
            snprintf(id, sizeof id, "dl_%c%07ld_%d", plan->letter, n, i);
            snprintf(file, sizeof file, "file_%c%07ld", plan->letter, o.items[i].product);
            copy_field(&cs, id);
            copy_field(&cs, o.id);
            copy_field_long(&cs, i);
            copy_field(&cs, file);
            copy_field(&cs, created);
            copy_row_end(&cs);
        }
        order_done(op, o.nitems);
    }
    counts->downloads = cs.rows;
    copy_end(&cs);
}

/* Phase 3: after the catalogue has committed, as items reference products of every
 * slice. */
static void write_orders(db *d, const seed_plan *plan, seed_counts *counts)
{
    if (plan->orders == 0)
        return;
    order_progress op = {.steps = 0, .rows = 0};
    progress_begin(&op.bar, "seed: orders", plan->orders * 3);
    sql_begin(d, "seed", DB_READ_COMMITTED);
    write_order_rows(d, plan, counts, &op);
    write_items(d, plan, counts, &op);
    write_downloads(d, plan, counts, &op);
    progress_end(&op.bar, op.rows);
    progress_note("seed: committing the orders (their sale triggers run now)");
    sql_commit(d, "seed");
}

/* --- the command ----------------------------------------------------------------------- */

static int default_jobs(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > SEED_MAX_JOBS ? SEED_MAX_JOBS : (int)cores;
}

static void parse_plan(int argc, char **argv, seed_plan *plan)
{
    option opts[] = {
        {"--mode", false, NULL},   {"--products", false, NULL},    {"--sellers", false, NULL},
        {"--orders", false, NULL}, {"--random-seed", false, NULL}, {"--files", true, NULL},
        {"--replace", true, NULL}, {"--jobs", false, NULL},        {"--no-vacuum", true, NULL}};
    parse_options("seed", argc, argv, opts, 9, NULL, 0);
    plan->mode = parse_mode("seed", option_required("seed", &opts[0]));
    plan->letter = plan->mode[0];
    plan->products =
        parse_count("seed", "--products", option_required("seed", &opts[1]), 1, SEED_MAX_ROWS);
    long default_sellers = plan->products / 100 > 1 ? plan->products / 100 : 1;
    plan->sellers = opts[2].value != NULL
                        ? parse_count("seed", "--sellers", opts[2].value, 1, 1000000)
                        : default_sellers;
    plan->orders = opts[3].value != NULL
                       ? parse_count("seed", "--orders", opts[3].value, 0, SEED_MAX_ROWS)
                       : 0;
    plan->buyers = plan->orders / 10 > 1 ? plan->orders / 10 : 1;
    plan->seed =
        opts[4].value != NULL
            ? (uint64_t)parse_count("seed", "--random-seed", opts[4].value, 0, 0x7fffffffffffffffL)
            : 1;
    plan->files = opts[5].value != NULL;
    plan->replace = opts[6].value != NULL;
    plan->jobs = opts[7].value != NULL
                     ? (int)parse_count("seed", "--jobs", opts[7].value, 1, SEED_MAX_JOBS)
                     : default_jobs();
    if (plan->jobs > plan->products)
        plan->jobs = (int)plan->products; /* every slice has a product */
    plan->vacuum = opts[8].value == NULL;
    plan->files_root = NULL;
    if (plan->files) {
        static market_config cfg; /* only its files_root, which points into the environment */
        char err[160];
        if (!config_load_one(&cfg, "MARKET_FILES_ROOT", err, sizeof err))
            fail("seed: %s", err);
        if (cfg.files_root == NULL)
            fail("seed: --files needs MARKET_FILES_ROOT (an absolute path)");
        plan->files_root = cfg.files_root;
    }
}

/* Phase 1. The lock is the session's, held until the command ends: two seeds of one mode
 * at once would both find nothing seeded and then collide, so the second waits here for
 * the first to finish, then sees its rows. */
static void write_shared(db *d, const seed_plan *plan)
{
    const char *lock[] = {plan->mode};
    sql_do(d, "seed", "SELECT pg_advisory_lock(hashtext('market-admin seed'), hashtext($1))", 1,
           lock);
    sql_begin(d, "seed", DB_READ_COMMITTED);
    clear_previous(d, plan);
    write_accounts(d, plan);
    write_sellers(d, plan);
    sql_commit(d, "seed");
}

/* Phase 4. VACUUM also moves the GIN index's pending list, filled by the load, into the
 * index proper (until then every search reads that list in full) and marks the pages
 * all-visible for index-only scans; ANALYZE gives the API's first queries good plans. The
 * order tables too: the seed may have written or (--replace) deleted orders. */
static void tidy_up(db *d, const seed_plan *plan)
{
    const char *tables = "products, tiers, files, orders, order_items, downloads";
    progress_note(plan->vacuum ? "seed: vacuum and analyze" : "seed: analyze");
    char sql[128]; /* constants only */
    snprintf(sql, sizeof sql, "%s %s", plan->vacuum ? "VACUUM (ANALYZE)" : "ANALYZE", tables);
    sql_do(d, "seed", sql, 0, NULL);
}

typedef struct {
    double start, mark; /* clock_seconds() */
    double shared, catalogue, indexes, orders, tidy;
} seed_clock;

/* Seconds since the previous lap (or the start). */
static double lap(seed_clock *t)
{
    double now = clock_seconds(), s = now - t->mark;
    t->mark = now;
    return s;
}

static void print_summary(const seed_plan *plan, const seed_counts *counts, seed_clock *t)
{
    fprintf(stderr,
            "seeded %s mode: %ld products (%ld tiers, %ld files), %ld sellers, %ld orders "
            "(%ld items, %ld refunded), %ld buyers, %ld files written, in %.1f s "
            "(shared rows %.1f s, catalogue %.1f s with %d jobs, indexes %.1f s, orders %.1f s, "
            "%s %.1f s)\n",
            plan->mode, plan->products, counts->tiers, plan->products, plan->sellers,
            counts->orders, counts->items, counts->refunded, plan->orders > 0 ? plan->buyers : 0,
            counts->files_written, clock_seconds() - t->start, t->shared, t->catalogue, plan->jobs,
            t->indexes, t->orders, plan->vacuum ? "vacuum" : "analyze", t->tidy);
}

int cmd_seed(int argc, char **argv)
{
    seed_plan plan;
    parse_plan(argc, argv, &plan);
    seed_clock t;
    t.start = clock_seconds();
    t.mark = t.start;

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    seed_counts counts = {0};
    write_shared(d, &plan);
    seed_indexes_restore(d); /* what a seed that failed may have left set aside */
    t.shared = lap(&t);
    if (plan.products >= SEED_DEFER_INDEXES)
        seed_indexes_set_aside(d);
    seed_run_slices(&plan, &counts);
    t.catalogue = lap(&t);
    seed_indexes_restore(d);
    t.indexes = lap(&t);
    write_orders(d, &plan, &counts);
    t.orders = lap(&t);
    tidy_up(d, &plan);
    t.tidy = lap(&t);
    db_close(d);
    print_summary(&plan, &counts, &t);
    return 0;
}
