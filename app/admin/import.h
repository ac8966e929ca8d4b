/* import: shared state of the three stages of `market-admin import`.
 *
 *   import.c        reads and parses the document, fetches what the database already has
 *                   for every id it defines or names, runs the stages in one transaction;
 *   import_check.c  validates everything, in document order, before anything is written;
 *   import_write.c  upserts the validated rows.
 *
 * Maps are json-c objects used as hash tables (id -> value): json-c is already here to
 * parse the document and its tables are good enough for any document that fits in memory. */
#ifndef MARKET_ADMIN_IMPORT_H
#define MARKET_ADMIN_IMPORT_H

#include <json-c/json.h>

#include "db.h"

typedef struct {
    json_object *root;
    const char *mode; /* NULL when the document holds no mode-bound rows */

    /* The document's arrays; NULL when absent. */
    json_object *accounts, *sellers, *products, *orders, *reviews;

    /* Ids the document defines, filled by the check as it goes. */
    json_object *def_accounts; /* id -> index */
    json_object *def_sellers;  /* id -> index */
    json_object *def_products; /* id -> index */
    json_object *def_tiers;    /* id -> product id */
    json_object *def_files;    /* id -> product id */
    json_object *def_orders;   /* id -> index */
    json_object *def_reviews;  /* id -> index */

    /* What the database has for every id the document defines or names. */
    json_object *db_accounts; /* id -> true */
    json_object *db_sellers;  /* id -> true */
    json_object *db_products; /* id -> [mode, currency] */
    json_object *db_tiers;    /* id -> product id */
    json_object *db_files;    /* id -> product id */
    json_object *db_orders;   /* id -> mode */
    json_object *db_reviews;  /* id -> mode */
    json_object *currencies;  /* code -> exponent */

    /* Derived by the check for the writer. */
    json_object *order_currency;    /* the currency of each order, index-aligned */
    json_object *implicit_accounts; /* id -> null: named, defined nowhere, to create */
} import_doc;

/* Fills the db_* maps and currencies with one query per table. */
void import_fetch(db *d, import_doc *doc);

/* Validates the whole document; on the first fault prints its path and exits 1. */
void import_check(import_doc *doc);

/* Upserts everything; the caller owns the transaction. Prints a summary line. */
void import_write(db *d, const import_doc *doc);

/* The exponent of a known currency. */
int import_exponent(const import_doc *doc, const char *currency);

/* A member that is present and not JSON null, else NULL. */
json_object *import_member(json_object *obj, const char *key);

/* The string value of a member (validated before use). */
const char *import_str(json_object *obj, const char *key);

#endif
