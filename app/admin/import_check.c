/* import, stage two: validate the whole document before anything is written.
 *
 * The rules mirror the CHECK constraints and foreign keys of 001_core.sql, plus the rules
 * of the contract the schema cannot express (one mode per document, one currency per
 * order, a tier belongs to the product it is bought with). The first fault ends the
 * command with its path, e.g. "products[3].tiers[0].price: must be a number with at most
 * 2 decimals". Arrays are checked in a fixed order (accounts, sellers, products, orders,
 * reviews) so that every reference points backwards, to a row already checked. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "ids.h"
#include "import.h"
#include "money.h"
#include "text.h"

#define WHERE_MAX 160
#define MAX_ORDER_ITEMS 100
#define MAX_FILENAME_BYTES 255

/* --- reporting -------------------------------------------------------------------------- */

static noreturn void vbad(const char *where, const char *key, const char *fmt, va_list ap)
{
    char message[512];
    vsnprintf(message, sizeof message, fmt, ap);
    if (key == NULL)
        fail("%s: %s", where, message);
    fail("%s%s%s: %s", where, where[0] != '\0' ? "." : "", key, message);
}

/* Reports the fault at where.key (or at where when key is NULL) and exits 1. */
__attribute__((format(printf, 3, 4))) static noreturn void bad(const char *where, const char *key,
                                                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vbad(where, key, fmt, ap);
    /* cppcheck-suppress va_end_missing ; vbad exits, so nothing returns here */
}

/* --- field readers: each checks one member and reports its path ------------------------- */

static void check_keys(const char *where, json_object *obj, const char *const *allowed)
{
    json_object_object_foreach(obj, key, unused)
    {
        (void)unused;
        bool known = false;
        for (const char *const *a = allowed; *a != NULL && !known; a++)
            known = strcmp(key, *a) == 0;
        if (!known)
            bad(where, key, "unknown field");
    }
}

static const char *want_string(const char *where, json_object *obj, const char *key, bool required)
{
    json_object *v = import_member(obj, key);
    if (v == NULL) {
        if (required)
            bad(where, key, "is required");
        return NULL;
    }
    if (!json_object_is_type(v, json_type_string))
        bad(where, key, "must be a string");
    const char *s = json_object_get_string(v);
    if (!utf8_valid(s, (size_t)json_object_get_string_len(v)))
        bad(where, key, "must be valid UTF-8 without NUL characters");
    if (required && s[0] == '\0')
        bad(where, key, "must not be empty");
    return s;
}

static const char *want_id(const char *where, json_object *obj, const char *key, const char *prefix)
{
    const char *s = want_string(where, obj, key, true);
    if (!ids_prefixed_valid(s, prefix))
        bad(where, key, "must be %s followed by 1 to 60 of [A-Za-z0-9_]", prefix);
    return s;
}

static const char *want_handle(const char *where, json_object *obj, const char *key)
{
    const char *s = want_string(where, obj, key, true);
    if (!ids_handle_valid(s))
        bad(where, key, "must be a seller handle: 1 to 40 of [a-z0-9_-], starting with [a-z0-9]");
    return s;
}

static const char *want_time(const char *where, json_object *obj, const char *key)
{
    const char *s = want_string(where, obj, key, false);
    if (s != NULL && !rfc3339_valid(s, 9, true))
        bad(where, key, "must be an RFC 3339 timestamp such as 2026-01-02T03:04:05Z");
    return s;
}

static long long want_int(const char *where, json_object *obj, const char *key, long long min,
                          long long max)
{
    json_object *v = import_member(obj, key);
    if (v == NULL)
        bad(where, key, "is required");
    /* The text of the number as written, so that 1e3, 5.0 and 2^64 are all refused. */
    const char *text = json_object_get_string(v);
    long long n = 0;
    bool ok = json_object_is_type(v, json_type_int) && strspn(text, "0123456789") == strlen(text) &&
              strlen(text) <= 18;
    if (ok)
        n = strtoll(text, NULL, 10);
    if (!ok || n < min || n > max)
        bad(where, key, "must be an integer from %lld to %lld", min, max);
    return n;
}

static const char *want_enum(const char *where, json_object *obj, const char *key,
                             const char *const *values, const char *listed)
{
    const char *s = want_string(where, obj, key, true);
    for (const char *const *v = values; *v != NULL; v++)
        if (strcmp(s, *v) == 0)
            return s;
    bad(where, key, "must be one of %s", listed);
}

/* An optional array; min_len 1 makes it required and non-empty. */
static json_object *want_array(const char *where, json_object *obj, const char *key, size_t min_len,
                               size_t max_len)
{
    json_object *v = import_member(obj, key);
    if (v == NULL && min_len == 0)
        return NULL;
    if (v == NULL)
        bad(where, key, "is required");
    if (!json_object_is_type(v, json_type_array))
        bad(where, key, "must be an array");
    size_t n = json_object_array_length(v);
    if (n < min_len || n > max_len)
        bad(where, key, "must have from %zu to %zu elements", min_len, max_len);
    return v;
}

/* arr[i], which must be an object; its path goes to out. */
static json_object *element(const char *where, const char *key, json_object *arr, size_t i,
                            char *out)
{
    snprintf(out, WHERE_MAX, "%s%s%s[%zu]", where, where[0] != '\0' ? "." : "", key, i);
    json_object *e = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(e, json_type_object))
        bad(out, NULL, "must be an object");
    return e;
}

/* --- ids and references ----------------------------------------------------------------- */

static void define(json_object *map, const char *id, json_object *value, const char *where)
{
    if (json_object_object_get_ex(map, id, NULL))
        bad(where, "id", "duplicate id %s", id);
    json_object_object_add(map, id, value);
}

static const char *map_string(json_object *map, const char *id)
{
    json_object *v;
    return json_object_object_get_ex(map, id, &v) ? json_object_get_string(v) : NULL;
}

/* An account named by a seller, order or review but defined nowhere is created with its
 * id alone: an account carries nothing else that matters here, and the contract's own
 * example document names acct_ann without defining it. */
static void note_account(import_doc *doc, const char *id)
{
    if (!json_object_object_get_ex(doc->def_accounts, id, NULL) &&
        !json_object_object_get_ex(doc->db_accounts, id, NULL))
        json_object_object_add(doc->implicit_accounts, id, NULL);
}

/* The currency of a product of the document's mode, from the document or the database. */
static const char *product_currency(const import_doc *doc, const char *where, const char *key,
                                    const char *id)
{
    json_object *v;
    if (json_object_object_get_ex(doc->def_products, id, &v))
        return import_str(json_object_array_get_idx(doc->products, json_object_get_int(v)),
                          "currency");
    if (!json_object_object_get_ex(doc->db_products, id, &v))
        bad(where, key, "no such product %s", id);
    const char *mode = json_object_get_string(json_object_array_get_idx(v, 0));
    if (strcmp(mode, doc->mode) != 0)
        bad(where, key, "%s is a %s product, not %s", id, mode, doc->mode);
    return json_object_get_string(json_object_array_get_idx(v, 1));
}

/* A row of the document that already exists in the database must be of the same mode. */
static void require_same_mode(const import_doc *doc, const char *where, const char *db_mode,
                              const char *id)
{
    if (db_mode != NULL && strcmp(db_mode, doc->mode) != 0)
        bad(where, "id", "%s already exists in %s mode", id, db_mode);
}

/* A tier or file that already exists must stay with its product. */
static void require_same_product(const char *where, const char *db_product, const char *id,
                                 const char *product)
{
    if (db_product != NULL && strcmp(db_product, product) != 0)
        bad(where, "id", "%s already belongs to product %s", id, db_product);
}

/* --- accounts and sellers ---------------------------------------------------------------- */

static void check_account(import_doc *doc, const char *where, json_object *a, size_t i)
{
    static const char *const keys[] = {"id", "email", "created_at", NULL};
    check_keys(where, a, keys);
    const char *id = want_id(where, a, "id", "acct_");
    want_string(where, a, "email", false);
    want_time(where, a, "created_at");
    define(doc->def_accounts, id, json_object_new_int((int)i), where);
}

static void check_seller(import_doc *doc, const char *where, json_object *s, size_t i)
{
    static const char *const keys[] = {"id",      "account",    "name", "bio",
                                       "website", "created_at", NULL};
    check_keys(where, s, keys);
    const char *id = want_handle(where, s, "id");
    note_account(doc, want_id(where, s, "account", "acct_"));
    want_string(where, s, "name", true);
    want_string(where, s, "bio", false);
    const char *website = want_string(where, s, "website", false);
    if (website != NULL && strncmp(website, "https://", 8) != 0 &&
        strncmp(website, "http://", 7) != 0)
        bad(where, "website", "must be an http:// or https:// URL");
    want_time(where, s, "created_at");
    define(doc->def_sellers, id, json_object_new_int((int)i), where);
}

/* --- products, tiers, files ------------------------------------------------------------ */

static void check_price(const char *where, json_object *tier, int exponent)
{
    json_object *v = import_member(tier, "price");
    if (v == NULL)
        bad(where, "price", "is required");
    /* json_object_get_string gives the number as written in the document, so the
     * conversion to minor units is exact decimal arithmetic, never a double. */
    int64_t minor;
    if ((!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) ||
        !money_parse(json_object_get_string(v), exponent, &minor))
        bad(where, "price", "must be a number with at most %d decimals", exponent);
}

static void check_tier(import_doc *doc, const char *where, json_object *t, const char *product,
                       int exponent)
{
    static const char *const keys[] = {"id", "name", "description", "price", "licence", NULL};
    check_keys(where, t, keys);
    const char *id = want_id(where, t, "id", "tier_");
    want_string(where, t, "name", true);
    want_string(where, t, "description", false);
    check_price(where, t, exponent);
    json_object *licence = import_member(t, "licence");
    if (licence != NULL && !json_object_is_type(licence, json_type_object))
        bad(where, "licence", "must be an object");
    require_same_product(where, map_string(doc->db_tiers, id), id, product);
    define(doc->def_tiers, id, json_object_new_string(product), where);
}

/* Relative, no empty, "." or ".." segment, no backslash or control character: the API
 * hands this path to nginx under the files root, so it must not climb out of it. */
/* It ends up in Content-Disposition: no separators, quotes or control characters. */
static bool filename_valid(const char *f)
{
    if (strlen(f) > MAX_FILENAME_BYTES || strcmp(f, ".") == 0 || strcmp(f, "..") == 0)
        return false;
    for (const char *s = f; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '/' || *s == '\\' || *s == '"')
            return false;
    return true;
}

static void check_file(import_doc *doc, const char *where, json_object *f, const char *product)
{
    static const char *const keys[] = {"id", "filename", "path", "size_bytes", NULL};
    check_keys(where, f, keys);
    const char *id = want_id(where, f, "id", "file_");
    if (!filename_valid(want_string(where, f, "filename", true)))
        bad(where, "filename",
            "must be a file name without /, \\, quotes or control characters (at most 255 "
            "bytes)");
    if (!ids_path_valid(want_string(where, f, "path", true)))
        bad(where, "path", "must be a relative path without empty, . or .. segments");
    want_int(where, f, "size_bytes", 0, 999999999999999999LL);
    require_same_product(where, map_string(doc->db_files, id), id, product);
    define(doc->def_files, id, json_object_new_string(product), where);
}

static void check_product(import_doc *doc, const char *where, json_object *p, size_t i)
{
    static const char *const keys[] = {"id",         "seller",   "title",  "description",
                                       "category",   "currency", "status", "created_at",
                                       "updated_at", "tiers",    "files",  NULL};
    static const char *const statuses[] = {"published", "draft", "archived", NULL};
    check_keys(where, p, keys);
    const char *id = want_id(where, p, "id", "prod_");
    json_object *known;
    if (json_object_object_get_ex(doc->db_products, id, &known))
        require_same_mode(doc, where, json_object_get_string(json_object_array_get_idx(known, 0)),
                          id);
    const char *seller = want_handle(where, p, "seller");
    if (!json_object_object_get_ex(doc->def_sellers, seller, NULL) &&
        !json_object_object_get_ex(doc->db_sellers, seller, NULL))
        bad(where, "seller", "no such seller %s", seller);
    want_string(where, p, "title", true);
    want_string(where, p, "description", false);
    if (!ids_slug_valid(want_string(where, p, "category", true)))
        bad(where, "category", "must be a slug: 1 to 40 of [a-z0-9-], starting with [a-z0-9]");
    const char *currency = want_string(where, p, "currency", true);
    json_object *exponent;
    if (!json_object_object_get_ex(doc->currencies, currency, &exponent))
        bad(where, "currency", "unknown currency %s", currency);
    want_enum(where, p, "status", statuses, "published, draft, archived");
    want_time(where, p, "created_at");
    want_time(where, p, "updated_at");
    define(doc->def_products, id, json_object_new_int((int)i), where);

    char sub[WHERE_MAX];
    json_object *tiers = want_array(where, p, "tiers", 1, 100);
    for (size_t t = 0; t < json_object_array_length(tiers); t++)
        check_tier(doc, sub, element(where, "tiers", tiers, t, sub), id,
                   json_object_get_int(exponent));
    json_object *files = want_array(where, p, "files", 0, 100);
    for (size_t f = 0; files != NULL && f < json_object_array_length(files); f++)
        check_file(doc, sub, element(where, "files", files, f, sub), id);
}

/* --- orders and reviews ---------------------------------------------------------------- */

/* Checks one item and returns the currency of its product. */
static const char *check_item(import_doc *doc, const char *where, json_object *item)
{
    static const char *const keys[] = {"product", "tier", NULL};
    check_keys(where, item, keys);
    const char *product = want_id(where, item, "product", "prod_");
    const char *currency = product_currency(doc, where, "product", product);
    const char *tier = want_id(where, item, "tier", "tier_");
    const char *owner = map_string(doc->def_tiers, tier);
    if (owner == NULL)
        owner = map_string(doc->db_tiers, tier);
    if (owner == NULL)
        bad(where, "tier", "no such tier %s", tier);
    if (strcmp(owner, product) != 0)
        bad(where, "tier", "%s is a tier of %s, not of %s", tier, owner, product);
    return currency;
}

static void check_order(import_doc *doc, const char *where, json_object *o, size_t i)
{
    static const char *const keys[] = {"id",          "account", "status", "created_at",
                                       "refunded_at", "items",   NULL};
    static const char *const statuses[] = {"pending", "paid", "refunded", NULL};
    check_keys(where, o, keys);
    const char *id = want_id(where, o, "id", "ord_");
    require_same_mode(doc, where, map_string(doc->db_orders, id), id);
    note_account(doc, want_id(where, o, "account", "acct_"));
    const char *status = want_enum(where, o, "status", statuses, "pending, paid, refunded");
    want_time(where, o, "created_at");
    if (want_time(where, o, "refunded_at") != NULL && strcmp(status, "refunded") != 0)
        bad(where, "refunded_at", "only a refunded order has refunded_at");
    define(doc->def_orders, id, json_object_new_int((int)i), where);

    json_object *items = want_array(where, o, "items", 1, MAX_ORDER_ITEMS);
    const char *order_currency = NULL;
    char sub[WHERE_MAX];
    for (size_t k = 0; k < json_object_array_length(items); k++) {
        const char *currency = check_item(doc, sub, element(where, "items", items, k, sub));
        if (order_currency == NULL)
            order_currency = currency;
        else if (strcmp(currency, order_currency) != 0)
            bad(sub, "product", "its currency %s differs from the order's %s", currency,
                order_currency);
    }
    json_object_array_add(doc->order_currency, json_object_new_string(order_currency));
}

static void check_review(import_doc *doc, const char *where, json_object *review, size_t i)
{
    static const char *const keys[] = {"id",   "product",    "account", "rating",
                                       "body", "created_at", NULL};
    check_keys(where, review, keys);
    const char *id = want_id(where, review, "id", "rev_");
    require_same_mode(doc, where, map_string(doc->db_reviews, id), id);
    product_currency(doc, where, "product", want_id(where, review, "product", "prod_"));
    note_account(doc, want_id(where, review, "account", "acct_"));
    want_int(where, review, "rating", 1, 5);
    want_string(where, review, "body", false);
    want_time(where, review, "created_at");
    define(doc->def_reviews, id, json_object_new_int((int)i), where);
}

/* --- the document ---------------------------------------------------------------------- */

typedef void (*row_check)(import_doc *doc, const char *where, json_object *row, size_t i);

static void check_array(import_doc *doc, const char *key, json_object *arr, row_check check)
{
    if (arr == NULL)
        return;
    if (!json_object_is_type(arr, json_type_array))
        bad(key, NULL, "must be an array");
    char where[WHERE_MAX];
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        check(doc, where, element("", key, arr, i, where), i);
}

static bool non_empty_array(json_object *v)
{
    return json_object_is_type(v, json_type_array) && json_object_array_length(v) > 0;
}

static void check_top(import_doc *doc)
{
    static const char *const keys[] = {"mode",   "accounts", "sellers", "products",
                                       "orders", "reviews",  NULL};
    if (!json_object_is_type(doc->root, json_type_object))
        fail("import: the document must be a JSON object");
    check_keys("", doc->root, keys);
    json_object *mode = import_member(doc->root, "mode");
    if (mode != NULL) {
        const char *m = json_object_get_string(mode);
        if (!json_object_is_type(mode, json_type_string) ||
            (strcmp(m, "test") != 0 && strcmp(m, "live") != 0))
            bad("mode", NULL, "must be test or live");
        doc->mode = m;
    }
    /* Mode-bound rows need a mode; a document of accounts and sellers alone does not. */
    bool has_moded = non_empty_array(doc->products) || non_empty_array(doc->orders) ||
                     non_empty_array(doc->reviews);
    if (doc->mode == NULL && has_moded)
        bad("mode", NULL,
            "is required (test or live) when the document has products, "
            "orders or reviews");
}

void import_check(import_doc *doc)
{
    doc->def_accounts = json_object_new_object();
    doc->def_sellers = json_object_new_object();
    doc->def_products = json_object_new_object();
    doc->def_tiers = json_object_new_object();
    doc->def_files = json_object_new_object();
    doc->def_orders = json_object_new_object();
    doc->def_reviews = json_object_new_object();
    doc->order_currency = json_object_new_array();
    doc->implicit_accounts = json_object_new_object();

    check_top(doc);
    check_array(doc, "accounts", doc->accounts, check_account);
    check_array(doc, "sellers", doc->sellers, check_seller);
    check_array(doc, "products", doc->products, check_product);
    check_array(doc, "orders", doc->orders, check_order);
    check_array(doc, "reviews", doc->reviews, check_review);
}
