/* import FILE|-: load a JSON document (docs/contract.md section 9) in one transaction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "db_array.h"
#include "import.h"

#define JSON_MAX_DEPTH 64

static void read_all(const char *name, buf *out)
{
    FILE *f = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
    if (f == NULL)
        fail("import: %s: %s", name, strerror(errno));
    if (!buf_append_stream(out, f))
        fail("import: %s: %s", name, strerror(errno));
    if (f != stdin)
        fclose(f);
}

static json_object *parse_document(const char *name)
{
    buf text;
    buf_init(&text, 65536);
    read_all(name, &text);
    json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
    if (tok == NULL)
        fail("import: out of memory");
    /* Strict JSON only: no comments, single quotes or trailing commas; UTF-8 checked. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = json_tokener_parse_ex(tok, text.data, (int)text.len);
    enum json_tokener_error err = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (err == json_tokener_continue)
        fail("import: %s: invalid JSON: unexpected end of input", name);
    if (err != json_tokener_success)
        fail("import: %s: invalid JSON at byte %zu: %s", name, end, json_tokener_error_desc(err));
    if (strspn(text.data + end, " \t\r\n") != text.len - end)
        fail("import: %s: invalid JSON at byte %zu: data after the document", name, end);
    json_tokener_free(tok);
    buf_free(&text);
    return root;
}

/* --- prefetch: every id the document defines or names, looked up once per table ------- */

/* Adds obj[key] to the set when it is a string (anything else fails the check later). */
static void collect(json_object *set, json_object *obj, const char *key)
{
    const char *s = import_str(obj, key);
    if (s != NULL)
        json_object_object_add(set, s, NULL);
}

/* collect() over every element of the array arr[i] */
static void collect_each(json_object *set, json_object *arr, const char *key)
{
    if (!json_object_is_type(arr, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        collect(set, json_object_array_get_idx(arr, i), key);
}

/* collect() over arr[i][inner][j][key] */
static void collect_nested(json_object *set, json_object *arr, const char *inner, const char *key)
{
    if (!json_object_is_type(arr, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(arr); i++)
        collect_each(set, import_member(json_object_array_get_idx(arr, i), inner), key);
}

/* A PostgreSQL array literal of the set's keys, in ids (empty). */
static void keys_literal(buf *ids, json_object *set)
{
    json_object_object_foreach(set, key, unused)
    {
        (void)unused;
        db_array_append(ids, key);
    }
    db_array_end(ids);
}

/* Runs sql with the set as $1 (text[]) and maps column 0 to: true (1 column), column 1
 * (2 columns) or [column 1, column 2] (3 columns). */
static json_object *fetch_map(db *d, const char *sql, json_object *set)
{
    json_object *map = json_object_new_object();
    if (json_object_object_length(set) == 0) {
        json_object_put(set);
        return map;
    }
    buf ids;
    buf_init(&ids, 256);
    keys_literal(&ids, set);
    const char *params[] = {ids.data};
    db_result *res = sql_run(d, "import", sql, 1, params);
    for (int i = 0; i < db_rows(res); i++) {
        json_object *v;
        if (db_columns(res) == 1) {
            v = json_object_new_boolean(1);
        } else if (db_columns(res) == 2) {
            v = json_object_new_string(db_text(res, i, 1));
        } else {
            v = json_object_new_array();
            json_object_array_add(v, json_object_new_string(db_text(res, i, 1)));
            json_object_array_add(v, json_object_new_string(db_text(res, i, 2)));
        }
        json_object_object_add(map, db_text(res, i, 0), v);
    }
    db_clear(res);
    buf_free(&ids);
    json_object_put(set);
    return map;
}

static json_object *fetch_currencies(db *d)
{
    json_object *map = json_object_new_object();
    db_result *res = sql_run(d, "import", "SELECT code, exponent FROM currencies", 0, NULL);
    for (int i = 0; i < db_rows(res); i++)
        json_object_object_add(map, db_text(res, i, 0),
                               json_object_new_int((int)db_int(res, i, 1)));
    db_clear(res);
    return map;
}

void import_fetch(db *d, import_doc *doc)
{
    json_object *accounts = json_object_new_object();
    collect_each(accounts, doc->accounts, "id");
    collect_each(accounts, doc->sellers, "account");
    collect_each(accounts, doc->orders, "account");
    collect_each(accounts, doc->reviews, "account");
    doc->db_accounts = fetch_map(d, "SELECT id FROM accounts WHERE id = ANY($1::text[])", accounts);

    json_object *sellers = json_object_new_object();
    collect_each(sellers, doc->sellers, "id");
    collect_each(sellers, doc->products, "seller");
    doc->db_sellers = fetch_map(d, "SELECT id FROM sellers WHERE id = ANY($1::text[])", sellers);

    json_object *products = json_object_new_object();
    collect_each(products, doc->products, "id");
    collect_nested(products, doc->orders, "items", "product");
    collect_each(products, doc->reviews, "product");
    doc->db_products = fetch_map(
        d, "SELECT id, mode, currency FROM products WHERE id = ANY($1::text[])", products);

    json_object *tiers = json_object_new_object();
    collect_nested(tiers, doc->products, "tiers", "id");
    collect_nested(tiers, doc->orders, "items", "tier");
    doc->db_tiers =
        fetch_map(d, "SELECT id, product_id FROM tiers WHERE id = ANY($1::text[])", tiers);

    json_object *files = json_object_new_object();
    collect_nested(files, doc->products, "files", "id");
    doc->db_files =
        fetch_map(d, "SELECT id, product_id FROM files WHERE id = ANY($1::text[])", files);

    json_object *orders = json_object_new_object();
    collect_each(orders, doc->orders, "id");
    doc->db_orders = fetch_map(d, "SELECT id, mode FROM orders WHERE id = ANY($1::text[])", orders);

    json_object *reviews = json_object_new_object();
    collect_each(reviews, doc->reviews, "id");
    doc->db_reviews =
        fetch_map(d, "SELECT id, mode FROM reviews WHERE id = ANY($1::text[])", reviews);

    doc->currencies = fetch_currencies(d);
}

/* --- the command ---------------------------------------------------------------------- */

/* The arrays are read here, loosely, so that the prefetch can walk them; their types are
 * checked (with paths) by import_check. */
static void locate_arrays(import_doc *doc)
{
    doc->accounts = import_member(doc->root, "accounts");
    doc->sellers = import_member(doc->root, "sellers");
    doc->products = import_member(doc->root, "products");
    doc->orders = import_member(doc->root, "orders");
    doc->reviews = import_member(doc->root, "reviews");
}

static void free_document(import_doc *doc)
{
    json_object *maps[] = {doc->root,         doc->def_accounts,   doc->def_sellers,
                           doc->def_products, doc->def_tiers,      doc->def_files,
                           doc->def_orders,   doc->def_reviews,    doc->db_accounts,
                           doc->db_sellers,   doc->db_products,    doc->db_tiers,
                           doc->db_files,     doc->db_orders,      doc->db_reviews,
                           doc->currencies,   doc->order_currency, doc->implicit_accounts};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        json_object_put(maps[i]);
}

int cmd_import(int argc, char **argv)
{
    const char *pos[1];
    if (parse_options("import", argc, argv, NULL, 0, pos, 1) != 1)
        usage_fail("import: FILE (or - for standard input) is required");

    import_doc doc = {0};
    doc.root = parse_document(pos[0]);
    locate_arrays(&doc);

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    /* REPEATABLE READ: the check and the writes see the same database. */
    sql_begin(d, "import", DB_REPEATABLE_READ);
    import_fetch(d, &doc);
    import_check(&doc);
    import_write(d, &doc);
    sql_commit(d, "import");
    db_close(d);
    free_document(&doc);
    return 0;
}
