/* seed: one slice of the catalogue (products first..last, their tiers and files), written
 * with COPY on the caller's connection and transaction. Products go first, then tiers,
 * then files, so every foreign key finds its product. Indexes stay in force; the
 * foreign-key checks are skipped when the role may (see skip_reference_checks_if_allowed). Every
 * row is rebuilt from its product number alone, so a slice needs nothing from the others and the
 * data does not depend on how the catalogue is cut. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "admin.h"
#include "seed.h"

void seed_id_range(const seed_plan *plan, const char *prefix, long first, long last, char lo[32],
                   char hi[32], char pattern[48])
{
    snprintf(lo, 32, "%s%c%07ld", prefix, plan->letter, first);
    snprintf(hi, 32, "%s%c%07ld", prefix, plan->letter, last);
    snprintf(pattern, 48, "^%s%c[0-9]{7}$", prefix, plan->letter);
}

/* seed --replace: the previous seeded products of this slice's range go in the slice's
 * own transaction (tiers and files cascade), so a failed seed leaves them in place. The
 * first and last slices also take the numbers outside 1..products (a previous seed may
 * have been larger). Seeded orders, which reference products of every slice, were
 * deleted before the slices started. */
static void delete_previous(db *d, const seed_plan *plan, seed_slice s)
{
    char lo[32], hi[32], pattern[48];
    seed_id_range(plan, "prod_", s.first == 1 ? 0 : s.first,
                  s.last == plan->products ? SEED_MAX_ROWS : s.last, lo, hi, pattern);
    const char *params[] = {lo, hi, pattern, plan->mode};
    sql_do(d, "seed --replace",
           "DELETE FROM products WHERE id BETWEEN $1 AND $2 AND id ~ $3 AND mode = $4", 4, params);
}

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

static void make_product(const seed_plan *plan, long n, seed_product *p)
{
    seed_make_product(plan->seed, plan->letter, n, plan->products, plan->sellers, p);
}

/* One product through one pass, with the rows it took. Relaxed: the main process only
 * reads the figures for display. */
static void advance(seed_slice s, long rows)
{
    atomic_fetch_add_explicit(&s.meter->steps, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s.meter->rows, rows, memory_order_relaxed);
}

static void write_products(db *d, const seed_plan *plan, seed_slice s)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: products",
               "COPY products (id, mode, seller_id, title, description, category, currency,"
               " exponent, status, min_price_minor, created_at, updated_at) FROM STDIN");
    for (long n = s.first; n <= s.last; n++) {
        seed_product p;
        make_product(plan, n, &p);
        copy_product_row(&cs, plan, &p);
        advance(s, 1);
    }
    copy_end(&cs);
}

static void write_tiers(db *d, const seed_plan *plan, seed_slice s, seed_counts *counts)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: tiers",
               "COPY tiers (id, product_id, name, description, price_minor, licence) FROM STDIN");
    for (long n = s.first; n <= s.last; n++) {
        seed_product p;
        make_product(plan, n, &p);
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
        advance(s, p.ntiers);
    }
    counts->tiers += cs.rows;
    copy_end(&cs);
}

static void write_files(db *d, const seed_plan *plan, seed_slice s)
{
    copy_stream cs;
    copy_begin(&cs, d, "seed: files",
               "COPY files (id, product_id, filename, path, size_bytes) FROM STDIN");
    for (long n = s.first; n <= s.last; n++) {
        seed_product p;
        make_product(plan, n, &p);
        char id[32], path[96];
        snprintf(id, sizeof id, "file_%c%07ld", plan->letter, n);
        snprintf(path, sizeof path, "%s/%s.zip", p.seller_handle, p.id);
        copy_field(&cs, id);
        copy_field(&cs, p.id);
        copy_field(&cs, p.filename);
        copy_field(&cs, path);
        copy_field_long(&cs, p.size_bytes);
        copy_row_end(&cs);
        advance(s, 1);
    }
    copy_end(&cs);
}

/* --- files on disk --------------------------------------------------------------------- */

static void make_dir(const char *path)
{
    /* EEXIST too when another slice made the seller's directory first. */
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

static void write_disk_files(const seed_plan *plan, seed_slice s, seed_counts *counts)
{
    if (!plan->files)
        return;
    make_dir(plan->files_root);
    buf content;
    buf_init(&content, 16384);
    for (long n = s.first; n <= s.last; n++) {
        seed_product p;
        make_product(plan, n, &p);
        char dir[1024], path[1200];
        snprintf(dir, sizeof dir, "%s/%s", plan->files_root, p.seller_handle);
        snprintf(path, sizeof path, "%s/%s.zip", dir, p.id);
        make_dir(dir);
        seed_file_content(&p, &content);
        write_file(path, &content);
        counts->files_written++;
        advance(s, 0);
    }
    buf_free(&content);
}

/* The generator makes every reference consistent by construction (a tier names a product
 * of its own slice, a product a seller committed in phase 1), so checking each of them
 * again is work spent for nothing, and much of a large seed's. A superuser may skip
 * those checks for this transaction: in replica mode PostgreSQL fires no ordinary
 * trigger, the foreign-key triggers included. Only the COPYs run that way; the deletes of
 * --replace run before, with their cascades. Without the right the checks simply run. */
static void skip_reference_checks_if_allowed(db *d)
{
    const char *superuser = db_server_param(d, "is_superuser");
    if (superuser == NULL || strcmp(superuser, "on") != 0)
        return;
    sql_do(d, "seed", "SET LOCAL session_replication_role = replica", 0, NULL);
}

void seed_write_slice(db *d, const seed_plan *plan, seed_slice s, seed_counts *counts)
{
    if (plan->replace)
        delete_previous(d, plan, s);
    skip_reference_checks_if_allowed(d);
    write_products(d, plan, s);
    write_tiers(d, plan, s, counts);
    write_files(d, plan, s);
    write_disk_files(plan, s, counts);
}
