/* seed: a synthetic, deterministic catalogue.
 *
 * Every row is a pure function of (random seed, mode, row number): product 17 of seed 1
 * is the same on every run and machine, and can be rebuilt on demand (orders rebuild the
 * products they buy instead of keeping the catalogue in memory). Seller handles depend
 * on the seller number alone, so both modes share the same sellers, as the contract's
 * shared seller profiles require. Timestamps lie in the two years before SEED_ANCHOR, a
 * fixed instant, so the data does not depend on the day it is generated. */
#ifndef MARKET_ADMIN_SEED_H
#define MARKET_ADMIN_SEED_H

#include "db.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SEED_ANCHOR 1793491200L  /* 2026-11-01T00:00:00Z */
#define SEED_SPAN (730L * 86400) /* two years */
#define SEED_MAX_ROWS 9999999L   /* ids carry 7 digits */
#define SEED_MAX_TIERS 3
#define SEED_MAX_ITEMS 2

/* splitmix64: tiny, fast, and good enough for synthetic data; not rand(), whose
 * sequence differs between C libraries. */
typedef struct {
    uint64_t state;
} seed_rng;

/* A generator for one row: independent streams per (seed, kind, number). */
seed_rng seed_rng_for(uint64_t seed, uint64_t kind, uint64_t number);
uint64_t seed_next(seed_rng *r);
uint32_t seed_below(seed_rng *r, uint32_t n); /* uniform enough in [0, n) */

typedef struct {
    char id[24]; /* prod_t0000001 */
    long seller;
    char seller_handle[48];
    const char *category;
    char title[96];
    char description[400];
    const char *currency;
    int exponent;
    const char *status;
    long created; /* Unix seconds */
    long updated;
    int ntiers;
    int64_t price[SEED_MAX_TIERS]; /* minor units, increasing */
    char filename[112];
    long size_bytes;
} seed_product;

typedef struct {
    char handle[48];
    char account[32];
    char name[64];
    char bio[160];
    char website[96];
    long created;
} seed_seller;

typedef struct {
    long product; /* number */
    int tier;     /* 0-based */
} seed_item;

typedef struct {
    char id[24];
    long buyer;
    long created;
    int refunded;
    int nitems;
    seed_item items[SEED_MAX_ITEMS];
    const char *currency;
} seed_order;

extern const char *const seed_tier_names[SEED_MAX_TIERS];
extern const char *const seed_tier_descriptions[SEED_MAX_TIERS];
extern const char *const seed_tier_licences[SEED_MAX_TIERS];

void seed_make_seller(long number, seed_seller *s);
void seed_make_product(uint64_t seed, char mode_letter, long number, long nproducts, long nsellers,
                       seed_product *p);
void seed_make_order(uint64_t seed, char mode_letter, long number, long nproducts, long nsellers,
                     long nbuyers, seed_order *o);

/* The file of a product: text naming it, exactly p->size_bytes long. */
void seed_file_content(const seed_product *p, buf *out);

/* Unix seconds as RFC 3339 UTC ("2026-01-02T03:04:05Z"). */
void seed_time_text(long t, char *out, size_t outsz);

/* --- the command: seed.c, seed_write.c, seed_slices.c ---------------------------------- */

#define SEED_MAX_JOBS 64

typedef struct {
    const char *mode;
    char letter; /* 't' or 'l': the mode's mark in every seeded id */
    uint64_t seed;
    long products, sellers, orders, buyers;
    int jobs; /* catalogue slices, each on its own connection */
    bool files, replace, vacuum;
    const char *files_root;
} seed_plan;

typedef struct {
    long tiers, orders, items, downloads, refunded, files_written;
} seed_counts;

/* Products first..last (numbers, inclusive) with their tiers and files: the share of
 * the catalogue that one connection writes in one transaction. */
/* How far a slice's writer has got, in memory shared with the main process, which sums
 * the meters for its progress line. Each writer has its own: no contention. */
typedef struct {
    _Atomic long steps; /* products through a pass (products, tiers, files, disk files) */
    _Atomic long rows;  /* rows sent to the server */
} seed_meter;

typedef struct {
    long first, last;
    seed_meter *meter;
} seed_slice;

/* Passes over each product of a slice: the rows of products, tiers, files, and with
 * --files the files on disk. */
#define SEED_PASSES(plan) ((plan)->files ? 4L : 3L)

/* The id range and exact pattern of a mode's seeded ids of one kind between two
 * numbers: <prefix><letter><7 digits>, so caller-chosen ids such as prod_tshirt never
 * match. */
void seed_id_range(const seed_plan *plan, const char *prefix, long first, long last, char lo[32],
                   char hi[32], char pattern[48]);

/* COPYs one slice (after deleting its share of the previous seed with --replace) on c,
 * inside the caller's transaction, then writes its disk files with --files. */
void seed_write_slice(db *d, const seed_plan *plan, seed_slice s, seed_counts *counts);

/* Writes the whole catalogue in plan->jobs slices at once, each in a process of its own
 * with its own connection and transaction, and commits them together once all are
 * written; on any failure none is committed and the command fails. Adds the slices'
 * counts to counts. */
void seed_run_slices(const seed_plan *plan, seed_counts *counts);

/* seed_indexes.c: a seed of at least SEED_DEFER_INDEXES products sets the products'
 * secondary indexes aside before its load and rebuilds them after it. restore rebuilds
 * whatever is set aside (also what a failed seed left) and returns how many. */
#define SEED_DEFER_INDEXES 100000
void seed_indexes_set_aside(db *d);
int seed_indexes_restore(db *d);

#endif
