/* import, stage three: upsert the validated document, inside the caller's transaction.
 *
 * Rows are written parents first (accounts, sellers, products with their tiers and files,
 * orders with their items and downloads, reviews), each with INSERT ... ON CONFLICT (id)
 * DO UPDATE, so importing the same document twice changes nothing the second time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "db_array.h"
#include "ids.h"
#include "import.h"
#include "money.h"
#include "progress.h"

/* What the import has written so far, and its progress line: a step per record of the
 * document (an account, seller, product with its tiers and files, order with its items,
 * or review). */
typedef struct {
    long accounts, sellers, products, tiers, files, orders, downloads, reviews;
    long steps;
    progress bar;
} import_counts;

static long rows_written(const import_counts *n)
{
    return n->accounts + n->sellers + n->products + n->tiers + n->files + n->orders + n->downloads +
           n->reviews;
}

static void record_done(import_counts *n)
{
    n->steps++;
    progress_show(&n->bar, n->steps, rows_written(n));
}

DB_STMT(
    upsert_account,
    "INSERT INTO accounts (id, email, created_at) VALUES ($1, $2, coalesce($3::timestamptz, now()))"
    " ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email,"
    " created_at = coalesce($3::timestamptz, accounts.created_at)",
    3);

DB_STMT(ensure_account, "INSERT INTO accounts (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", 1);

DB_STMT(upsert_seller,
        "INSERT INTO sellers (id, account_id, name, bio, website, created_at)"
        " VALUES ($1, $2, $3, coalesce($4, ''), $5, coalesce($6::timestamptz, now()))"
        " ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id, name = EXCLUDED.name,"
        " bio = EXCLUDED.bio, website = EXCLUDED.website,"
        " created_at = coalesce($6::timestamptz, sellers.created_at)",
        6);

/* updated_at: as given, else the time of the import that changed the row (never before
 * created_at). */
DB_STMT(upsert_product,
        "INSERT INTO products (id, mode, seller_id, title, description, category, currency,"
        " exponent, status, created_at, updated_at)"
        " VALUES ($1, $2, $3, $4, coalesce($5, ''), $6, $7::char(3),"
        " (SELECT exponent FROM currencies WHERE code = $7::char(3)), $8,"
        " coalesce($9::timestamptz, now()),"
        " coalesce($10::timestamptz, greatest(now(), $9::timestamptz)))"
        " ON CONFLICT (id) DO UPDATE SET seller_id = EXCLUDED.seller_id, title = EXCLUDED.title,"
        " description = EXCLUDED.description, category = EXCLUDED.category,"
        " currency = EXCLUDED.currency, exponent = EXCLUDED.exponent, status = EXCLUDED.status,"
        " created_at = coalesce($9::timestamptz, products.created_at),"
        " updated_at = coalesce($10::timestamptz, greatest(now(), $9::timestamptz))"
        /* An unchanged product keeps its updated_at: re-importing is a no-op. */
        " WHERE (products.seller_id, products.title, products.description, products.category,"
        " products.currency, products.status, products.created_at, products.updated_at)"
        " IS DISTINCT FROM (EXCLUDED.seller_id, EXCLUDED.title, EXCLUDED.description,"
        " EXCLUDED.category, EXCLUDED.currency, EXCLUDED.status,"
        " coalesce($9::timestamptz, products.created_at),"
        " coalesce($10::timestamptz, products.updated_at))",
        10);

DB_STMT(upsert_tier,
        "INSERT INTO tiers (id, product_id, name, description, price_minor, licence)"
        " VALUES ($1, $2, $3, coalesce($4, ''), $5, $6::jsonb)"
        " ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,"
        " price_minor = EXCLUDED.price_minor, licence = EXCLUDED.licence",
        6);

DB_STMT(upsert_file,
        "INSERT INTO files (id, product_id, filename, path, size_bytes) VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (id) DO UPDATE SET filename = EXCLUDED.filename, path = EXCLUDED.path,"
        " size_bytes = EXCLUDED.size_bytes",
        5);

/* Set-based, once for all products of the document: the lowest tier price is the list
 * price, in the product's currency. */
DB_STMT(update_min_price,
        "UPDATE products p SET min_price_minor = m.price, exponent = c.exponent"
        " FROM (SELECT product_id, min(price_minor) AS price FROM tiers"
        "       WHERE product_id = ANY($1::text[]) GROUP BY product_id) m, currencies c"
        " WHERE p.id = m.product_id AND c.code = p.currency",
        1);

/* The sale triggers of 003_event_triggers.sql are deferred to commit, so the items
 * written after the order row are there when they run; and they fire only on a real
 * status change, so re-importing an order announces nothing twice. */
DB_STMT(
    upsert_order,
    "INSERT INTO orders (id, mode, account_id, status, currency, created_at, paid_at,"
    " refunded_at)"
    " SELECT $1::text, $2::text, $3::text, $4::text, $5::char(3), t.created,"
    " CASE WHEN $4::text <> 'pending' THEN t.created END,"
    " CASE WHEN $4::text = 'refunded' THEN coalesce($6::timestamptz, t.created) END"
    " FROM (SELECT coalesce($7::timestamptz, now()) AS created) t"
    " ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id,"
    " status = EXCLUDED.status, currency = EXCLUDED.currency,"
    " created_at = coalesce($7::timestamptz, orders.created_at),"
    " paid_at = CASE WHEN $4::text <> 'pending' THEN coalesce($7::timestamptz, orders.created_at) "
    "END,"
    " refunded_at = CASE WHEN $4::text = 'refunded' THEN"
    " coalesce($6::timestamptz, orders.refunded_at, $7::timestamptz, orders.created_at) END",
    7);

/* Title, tier name and price are copies taken at purchase: re-importing the same item
 * keeps them; only an item that names another product or tier takes new copies. */
DB_STMT(upsert_item,
        "INSERT INTO order_items (order_id, position, product_id, tier_id, title, tier_name,"
        " price_minor)"
        " SELECT $1::text, $2::smallint, p.id, t.id, p.title, t.name, t.price_minor"
        " FROM products p JOIN tiers t ON t.product_id = p.id WHERE p.id = $3 AND t.id = $4"
        " ON CONFLICT (order_id, position) DO UPDATE SET product_id = EXCLUDED.product_id,"
        " tier_id = EXCLUDED.tier_id, title = EXCLUDED.title, tier_name = EXCLUDED.tier_name,"
        " price_minor = EXCLUDED.price_minor"
        " WHERE order_items.product_id <> EXCLUDED.product_id"
        " OR order_items.tier_id <> EXCLUDED.tier_id",
        4);

/* Items beyond the document's list, and downloads that no longer match their item's
 * product, go (re-importing an order with fewer or other items). */
DB_STMT(trim_downloads,
        "DELETE FROM downloads d WHERE d.order_id = $1 AND NOT EXISTS (SELECT 1 FROM order_items i"
        " JOIN files f ON f.product_id = i.product_id WHERE i.order_id = d.order_id"
        " AND i.position = d.position AND i.position < $2 AND f.id = d.file_id)",
        2);

DB_STMT(trim_items, "DELETE FROM order_items WHERE order_id = $1 AND position >= $2", 2);

DB_STMT(product_files, "SELECT id FROM files WHERE product_id = $1 ORDER BY id", 1);

DB_STMT(insert_download,
        "INSERT INTO downloads (id, order_id, position, file_id, created_at)"
        " SELECT $1::text, $2::text, $3::smallint, $4::text, created_at FROM orders WHERE id = $2"
        " ON CONFLICT (order_id, position, file_id) DO NOTHING",
        4);

DB_STMT(upsert_review,
        "INSERT INTO reviews (id, mode, product_id, account_id, rating, body, created_at)"
        " VALUES ($1, $2, $3, $4, $5, coalesce($6, ''), coalesce($7::timestamptz, now()))"
        " ON CONFLICT (id) DO UPDATE SET product_id = EXCLUDED.product_id,"
        " account_id = EXCLUDED.account_id, rating = EXCLUDED.rating, body = EXCLUDED.body,"
        " created_at = coalesce($7::timestamptz, reviews.created_at)",
        7);

static size_t length_of(json_object *arr)
{
    return arr != NULL ? json_object_array_length(arr) : 0;
}

static json_object *at(json_object *arr, size_t i)
{
    return json_object_array_get_idx(arr, i);
}

/* Integer members are validated digits; their text is the parameter. */
static const char *number_text(json_object *obj, const char *key)
{
    return json_object_get_string(import_member(obj, key));
}

static void write_accounts(db *d, const import_doc *doc, import_counts *n)
{
    for (size_t i = 0; i < length_of(doc->accounts); i++) {
        json_object *a = at(doc->accounts, i);
        const char *params[] = {import_str(a, "id"), import_str(a, "email"),
                                import_str(a, "created_at")};
        stmt_do(d, &upsert_account, params);
        n->accounts++;
        record_done(n);
    }
    json_object_object_foreach(doc->implicit_accounts, id, unused)
    {
        (void)unused;
        const char *params[] = {id};
        stmt_do(d, &ensure_account, params);
        n->accounts++;
        record_done(n);
    }
}

static void write_sellers(db *d, const import_doc *doc, import_counts *n)
{
    for (size_t i = 0; i < length_of(doc->sellers); i++) {
        json_object *s = at(doc->sellers, i);
        const char *params[] = {import_str(s, "id"),      import_str(s, "account"),
                                import_str(s, "name"),    import_str(s, "bio"),
                                import_str(s, "website"), import_str(s, "created_at")};
        stmt_do(d, &upsert_seller, params);
        n->sellers++;
        record_done(n);
    }
}

static void write_tier(db *d, json_object *t, const char *product, int exponent)
{
    int64_t minor = 0;
    money_parse(json_object_get_string(import_member(t, "price")), exponent, &minor);
    db_arg minor_arg;
    json_object *licence = import_member(t, "licence");
    const char *licence_text =
        licence != NULL ? json_object_to_json_string_ext(
                              licence, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                        : "{}";
    const char *params[] = {import_str(t, "id"),           product,
                            import_str(t, "name"),         import_str(t, "description"),
                            db_arg_int(&minor_arg, minor), licence_text};
    stmt_do(d, &upsert_tier, params);
}

static void write_file(db *d, json_object *f, const char *product)
{
    const char *params[] = {import_str(f, "id"), product, import_str(f, "filename"),
                            import_str(f, "path"), number_text(f, "size_bytes")};
    stmt_do(d, &upsert_file, params);
}

static void write_product(db *d, const import_doc *doc, json_object *p, import_counts *n)
{
    const char *id = import_str(p, "id");
    const char *params[] = {id,
                            doc->mode,
                            import_str(p, "seller"),
                            import_str(p, "title"),
                            import_str(p, "description"),
                            import_str(p, "category"),
                            import_str(p, "currency"),
                            import_str(p, "status"),
                            import_str(p, "created_at"),
                            import_str(p, "updated_at")};
    stmt_do(d, &upsert_product, params);
    n->products++;
    int exponent = import_exponent(doc, import_str(p, "currency"));
    json_object *tiers = import_member(p, "tiers");
    for (size_t t = 0; t < length_of(tiers); t++, n->tiers++)
        write_tier(d, at(tiers, t), id, exponent);
    json_object *files = import_member(p, "files");
    for (size_t f = 0; f < length_of(files); f++, n->files++)
        write_file(d, at(files, f), id);
    record_done(n);
}

static void write_products(db *d, const import_doc *doc, import_counts *n)
{
    if (length_of(doc->products) == 0)
        return;
    buf ids;
    buf_init(&ids, 4096);
    for (size_t i = 0; i < length_of(doc->products); i++) {
        json_object *p = at(doc->products, i);
        write_product(d, doc, p, n);
        db_array_append(&ids, import_str(p, "id"));
    }
    db_array_end(&ids);
    const char *params[] = {ids.data};
    stmt_do(d, &update_min_price, params);
    buf_free(&ids);
}

/* One download per file of the item's product, each with a fresh random id, unless that
 * (order, position, file) already has one. */
static void write_downloads(db *d, const char *order, const char *position, const char *product,
                            import_counts *n)
{
    const char *find[] = {product};
    db_result *files = stmt_run(d, &product_files, find);
    for (int f = 0; f < db_rows(files); f++) {
        char id[40];
        ids_random(id, sizeof id, "dl_");
        const char *params[] = {id, order, position, db_text(files, f, 0)};
        db_result *res = stmt_run(d, &insert_download, params);
        n->downloads += db_affected(res);
        db_clear(res);
    }
    db_clear(files);
}

static void write_order(db *d, const import_doc *doc, size_t i, import_counts *n)
{
    json_object *o = at(doc->orders, i);
    const char *id = import_str(o, "id");
    const char *currency = json_object_get_string(at(doc->order_currency, i));
    const char *params[] = {id,
                            doc->mode,
                            import_str(o, "account"),
                            import_str(o, "status"),
                            currency,
                            import_str(o, "refunded_at"),
                            import_str(o, "created_at")};
    stmt_do(d, &upsert_order, params);

    json_object *items = import_member(o, "items");
    char count[24];
    snprintf(count, sizeof count, "%zu", length_of(items));
    for (size_t k = 0; k < length_of(items); k++) {
        char position[24];
        snprintf(position, sizeof position, "%zu", k);
        json_object *item = at(items, k);
        const char *row[] = {id, position, import_str(item, "product"), import_str(item, "tier")};
        stmt_do(d, &upsert_item, row);
    }
    const char *trim[] = {id, count};
    stmt_do(d, &trim_downloads, trim);
    stmt_do(d, &trim_items, trim);
    for (size_t k = 0; k < length_of(items); k++) {
        char position[24];
        snprintf(position, sizeof position, "%zu", k);
        write_downloads(d, id, position, import_str(at(items, k), "product"), n);
    }
    n->orders++;
    record_done(n);
}

static void write_reviews(db *d, const import_doc *doc, import_counts *n)
{
    for (size_t i = 0; i < length_of(doc->reviews); i++) {
        json_object *review = at(doc->reviews, i);
        const char *params[] = {import_str(review, "id"),        doc->mode,
                                import_str(review, "product"),   import_str(review, "account"),
                                number_text(review, "rating"),   import_str(review, "body"),
                                import_str(review, "created_at")};
        stmt_do(d, &upsert_review, params);
        n->reviews++;
        record_done(n);
    }
}

void import_write(db *d, const import_doc *doc)
{
    import_counts n = {0};
    long records =
        (long)(length_of(doc->accounts) + length_of(doc->sellers) + length_of(doc->products) +
               length_of(doc->orders) + length_of(doc->reviews)) +
        json_object_object_length(doc->implicit_accounts);
    progress_begin(&n.bar, "import", records);
    write_accounts(d, doc, &n);
    write_sellers(d, doc, &n);
    write_products(d, doc, &n);
    for (size_t i = 0; i < length_of(doc->orders); i++)
        write_order(d, doc, i, &n);
    write_reviews(d, doc, &n);
    progress_end(&n.bar, rows_written(&n));
    printf("imported %ld accounts, %ld sellers, %ld products (%ld tiers, %ld files), "
           "%ld orders (%ld new downloads), %ld reviews\n",
           n.accounts, n.sellers, n.products, n.tiers, n.files, n.orders, n.downloads, n.reviews);
}
