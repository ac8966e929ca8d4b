/* seed --mode test|live --products N [--sellers N] [--orders N] [--random-seed N]
 *      [--files] [--replace]
 *
 * Writes the catalogue of seed_catalog.c in one transaction. Products, tiers, files,
 * orders, items and downloads go straight into their tables with COPY (indexes, foreign
 * keys and triggers all stay in force); accounts and sellers, shared by both modes and
 * possibly there already, go through a temporary table and INSERT ... ON CONFLICT DO
 * NOTHING. The client generates rows while the server indexes the previous chunk, so the
 * two cores work at once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "admin.h"
#include "seed.h"

typedef struct {
    const char *mode;
    char letter; /* 't' or 'l': the mode's mark in every seeded id */
    uint64_t seed;
    long products, sellers, orders, buyers;
    bool files, replace;
    const char *files_root;
} seed_plan;

typedef struct {
    long tiers, orders, items, downloads, refunded, files_written;
} seed_counts;

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* --- existing seeded rows -------------------------------------------------------------- */

/* Seeded ids of a mode are <prefix><letter><7 digits>: a range scan on the primary key
 * plus an exact pattern, so caller-chosen ids such as prod_tshirt never match. */
static void seeded_range(const seed_plan *plan, const char *prefix, char lo[32], char hi[32],
                         char pattern[48])
{
    snprintf(lo, 32, "%s%c0000000", prefix, plan->letter);
    snprintf(hi, 32, "%s%c9999999", prefix, plan->letter);
    snprintf(pattern, 48, "^%s%c[0-9]{7}$", prefix, plan->letter);
}

static bool has_seeded(PGconn *c, const seed_plan *plan, const char *table, const char *prefix)
{
    char lo[32], hi[32], pattern[48], sql[160];
    seeded_range(plan, prefix, lo, hi, pattern);
    /* table is one of two constants of this file, never input. */
    snprintf(sql, sizeof sql,
             "SELECT 1 FROM %s WHERE id BETWEEN $1 AND $2 AND id ~ $3 AND mode = $4 LIMIT 1",
             table);
    const char *params[] = {lo, hi, pattern, plan->mode};
    PGresult *r = sql_run(c, "seed", sql, 4, params);
    bool found = PQntuples(r) > 0;
    PQclear(r);
    return found;
}

static void delete_seeded(PGconn *c, const seed_plan *plan, const char *table, const char *prefix)
{
    char lo[32], hi[32], pattern[48], sql[160];
    seeded_range(plan, prefix, lo, hi, pattern);
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE id BETWEEN $1 AND $2 AND id ~ $3 AND mode = $4",
             table);
    const char *params[] = {lo, hi, pattern, plan->mode};
    sql_do(c, "seed --replace", sql, 4, params);
}

static void clear_previous(PGconn *c, const seed_plan *plan)
{
    if (!has_seeded(c, plan, "products", "prod_") && !has_seeded(c, plan, "orders", "ord_"))
        return;
    if (!plan->replace)
        fail("seed: %s mode already has seeded rows (prod_%c0000001...); use --replace to "
             "delete them first",
             plan->mode, plan->letter);
    /* Orders first: their items reference the products (tiers and files cascade). */
    delete_seeded(c, plan, "orders", "ord_");
    delete_seeded(c, plan, "products", "prod_");
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

static void write_accounts(PGconn *c, const seed_plan *plan)
{
    sql_do(c, "seed",
           "CREATE TEMP TABLE seed_accounts (id text, email text, created_at timestamptz)"
           " ON COMMIT DROP",
           0, NULL);
    copy_stream cs;
    copy_begin(&cs, c, "seed: accounts", "COPY seed_accounts FROM STDIN");
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
    sql_do(c, "seed: accounts",
           "INSERT INTO accounts (id, email, created_at)"
           " SELECT id, email, created_at FROM seed_accounts"
           " ON CONFLICT (id) DO NOTHING",
           0, NULL);
}

static void write_sellers(PGconn *c, const seed_plan *plan)
{
    sql_do(c, "seed",
           "CREATE TEMP TABLE seed_sellers (id text, account_id text, name text,"
           " bio text, website text, created_at timestamptz) ON COMMIT DROP",
           0, NULL);
    copy_stream cs;
    copy_begin(&cs, c, "seed: sellers", "COPY seed_sellers FROM STDIN");
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
    sql_do(c, "seed: sellers",
           "INSERT INTO sellers (id, account_id, name, bio, website, created_at)"
           " SELECT id, account_id, name, bio, website, created_at"
           " FROM seed_sellers ON CONFLICT (id) DO NOTHING",
           0, NULL);
}

/* --- the catalogue --------------------------------------------------------------------- */

static void copy_product_row(copy_stream *cs, const seed_plan *plan, const seed_product *p)
{
    char created[32], updated[32];
    seed_time_text(p->created, created, sizeof created);
    seed_time_text(p->updated, updated, sizeof updated);
    copy_field(cs, p->id);
    copy_field(cs, plan->mode);
    copy_field(cs, p->seller_handle);
    copy_field(cs, p->title);
    copy_field(cs, p->description);
    copy_field(cs, p->category);
    copy_field(cs, p->currency);
    copy_field_long(cs, p->exponent);
    copy_field(cs, p->status);
    copy_field_long(cs, p->price[0]); /* tiers rise in price: the first is the lowest */
    copy_field(cs, created);
    copy_field(cs, updated);
    copy_row_end(cs);
}

static void write_products(PGconn *c, const seed_plan *plan)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: products",
               "COPY products (id, mode, seller_id, title, description, category, currency,"
               " exponent, status, min_price_minor, created_at, updated_at) FROM STDIN");
    for (long n = 1; n <= plan->products; n++) {
        seed_product p;
        seed_make_product(plan->seed, plan->letter, n, plan->products, plan->sellers, &p);
        copy_product_row(&cs, plan, &p);
    }
    copy_end(&cs);
}

static void write_tiers(PGconn *c, const seed_plan *plan, seed_counts *counts)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: tiers",
               "COPY tiers (id, product_id, name, description, price_minor, licence) FROM STDIN");
    for (long n = 1; n <= plan->products; n++) {
        seed_product p;
        seed_make_product(plan->seed, plan->letter, n, plan->products, plan->sellers, &p);
        for (int t = 0; t < p.ntiers; t++) {
            char id[32];
            snprintf(id, sizeof id, "tier_%c%07ld_%d", plan->letter, n, t + 1);
            copy_field(&cs, id);
            copy_field(&cs, p.id);
            copy_field(&cs, seed_tier_names[t]);
            copy_field(&cs, seed_tier_descriptions[t]);
            copy_field_long(&cs, p.price[t]);
            copy_field(&cs, seed_tier_licences[t]);
            copy_row_end(&cs);
        }
    }
    counts->tiers = cs.rows;
    copy_end(&cs);
}

static void write_files(PGconn *c, const seed_plan *plan)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: files",
               "COPY files (id, product_id, filename, path, size_bytes) FROM STDIN");
    for (long n = 1; n <= plan->products; n++) {
        seed_product p;
        seed_make_product(plan->seed, plan->letter, n, plan->products, plan->sellers, &p);
        char id[32], path[96];
        snprintf(id, sizeof id, "file_%c%07ld", plan->letter, n);
        snprintf(path, sizeof path, "%s/%s.zip", p.seller_handle, p.id);
        copy_field(&cs, id);
        copy_field(&cs, p.id);
        copy_field(&cs, p.filename);
        copy_field(&cs, path);
        copy_field_long(&cs, p.size_bytes);
        copy_row_end(&cs);
    }
    copy_end(&cs);
}

/* --- orders ---------------------------------------------------------------------------- */

/* Orders go in with their final status before their items: the sale triggers of
 * 003_event_triggers.sql are deferred to commit, when the items are there. */
static void write_order_rows(PGconn *c, const seed_plan *plan, seed_counts *counts)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: orders",
               "COPY orders (id, mode, account_id, status, currency, created_at, paid_at,"
               " refunded_at) FROM STDIN");
    for (long n = 1; n <= plan->orders; n++) {
        seed_order o;
        seed_make_order(plan->seed, plan->letter, n, plan->products, plan->sellers, plan->buyers,
                        &o);
        if (o.nitems == 0)
            continue; /* nothing purchasable: a catalogue of drafts */
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
    }
    counts->orders = cs.rows;
    copy_end(&cs);
}

static void write_items(PGconn *c, const seed_plan *plan, seed_counts *counts)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: order items",
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
    }
    counts->items = cs.rows;
    copy_end(&cs);
}

/* One file per seeded product, so one download per item: dl_<order>_<position>. */
static void write_downloads(PGconn *c, const seed_plan *plan, seed_counts *counts)
{
    copy_stream cs;
    copy_begin(&cs, c, "seed: downloads",
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
    }
    counts->downloads = cs.rows;
    copy_end(&cs);
}

static void write_orders(PGconn *c, const seed_plan *plan, seed_counts *counts)
{
    if (plan->orders == 0)
        return;
    write_order_rows(c, plan, counts);
    write_items(c, plan, counts);
    write_downloads(c, plan, counts);
}

/* --- files on disk --------------------------------------------------------------------- */

static void make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        fail("seed: %s: %s", path, strerror(errno));
}

static void write_file(const char *path, const buf *content)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        fail("seed: %s: %s", path, strerror(errno));
    if (fwrite(content->data, 1, content->len, f) != content->len || fclose(f) != 0)
        fail("seed: %s: write error", path);
}

static void write_disk_files(const seed_plan *plan, seed_counts *counts)
{
    if (!plan->files)
        return;
    make_dir(plan->files_root);
    buf content;
    buf_init(&content, 16384);
    for (long n = 1; n <= plan->products; n++) {
        seed_product p;
        seed_make_product(plan->seed, plan->letter, n, plan->products, plan->sellers, &p);
        char dir[1024], path[1200];
        snprintf(dir, sizeof dir, "%s/%s", plan->files_root, p.seller_handle);
        snprintf(path, sizeof path, "%s/%s.zip", dir, p.id);
        make_dir(dir);
        seed_file_content(&p, &content);
        write_file(path, &content);
        counts->files_written++;
    }
    buf_free(&content);
}

/* --- the command ----------------------------------------------------------------------- */

static void parse_plan(int argc, char **argv, seed_plan *plan)
{
    option opts[] = {{"--mode", false, NULL},        {"--products", false, NULL},
                     {"--sellers", false, NULL},     {"--orders", false, NULL},
                     {"--random-seed", false, NULL}, {"--files", true, NULL},
                     {"--replace", true, NULL}};
    parse_options("seed", argc, argv, opts, 7, NULL, 0);
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
    plan->files_root = getenv("MARKET_FILES_ROOT");
    if (plan->files && (plan->files_root == NULL || plan->files_root[0] != '/'))
        fail("seed: --files needs MARKET_FILES_ROOT (an absolute path)");
}

int cmd_seed(int argc, char **argv)
{
    seed_plan plan;
    parse_plan(argc, argv, &plan);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);

    market_config cfg;
    PGconn *c = admin_connect(0, &cfg);
    seed_counts counts = {0};
    sql_do(c, "seed", "BEGIN", 0, NULL);
    /* Two seeds of one mode at once would both find nothing seeded and then collide: the
     * second waits here for the first to finish, then sees its rows. */
    const char *lock[] = {plan.mode};
    sql_do(c, "seed", "SELECT pg_advisory_xact_lock(hashtext('market-admin seed'), hashtext($1))",
           1, lock);
    clear_previous(c, &plan);
    write_accounts(c, &plan);
    write_sellers(c, &plan);
    write_products(c, &plan);
    write_tiers(c, &plan, &counts);
    write_files(c, &plan);
    write_orders(c, &plan, &counts);
    write_disk_files(&plan, &counts);
    sql_do(c, "seed", "COMMIT", 0, NULL);
    /* Fresh statistics, so the API's first queries get good plans at once. */
    sql_do(c, "seed", "ANALYZE products, tiers, files, orders, order_items, downloads", 0, NULL);
    PQfinish(c);
    fprintf(stderr,
            "seeded %s mode: %ld products (%ld tiers, %ld files), %ld sellers, %ld orders "
            "(%ld items, %ld refunded), %ld buyers, %ld files written, in %.1f s\n",
            plan.mode, plan.products, counts.tiers, plan.products, plan.sellers, counts.orders,
            counts.items, counts.refunded, plan.orders > 0 ? plan.buyers : 0, counts.files_written,
            seconds_since(&start));
    return 0;
}
