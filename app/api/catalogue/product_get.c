/* GET /v1/products/:id: one published product of the caller's mode with its licence
 * tiers (cheapest first) and its rating. One statement: the product row repeated per
 * tier (a product always has at least one tier when it is listed, but a LEFT JOIN keeps
 * a tierless one visible rather than 404). */
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "handlers.h"

DB_STMT(product_get,
        "SELECT p.id, p.title, p.description, p.category, p.min_price_minor, p.exponent,"
        "       p.currency, p.seller_id,"
        "       to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
        "       to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
        "       rv.average, rv.count,"
        "       t.id, t.name, t.description, t.price_minor, t.licence::text"
        "  FROM products p"
        "  CROSS JOIN LATERAL (SELECT trim_scale(round(avg(rating), 2))::text AS average,"
        "                             count(*) AS count"
        "                        FROM reviews WHERE product_id = p.id AND mode = p.mode) rv"
        "  LEFT JOIN tiers t ON t.product_id = p.id"
        " WHERE p.id = $1 AND p.mode = $2 AND p.status = 'published'"
        " ORDER BY t.price_minor, t.id",
        2);

enum {
    C_ID,
    C_TITLE,
    C_DESCRIPTION,
    C_CATEGORY,
    C_PRICE,
    C_EXPONENT,
    C_CURRENCY,
    C_SELLER,
    C_CREATED,
    C_UPDATED,
    C_RATING_AVG,
    C_RATING_COUNT,
    C_TIER_ID,
    C_TIER_NAME,
    C_TIER_DESCRIPTION,
    C_TIER_PRICE,
    C_TIER_LICENCE
};

static void write_tiers(json_writer *j, const db_result *res, int exponent, const char *currency)
{
    jw_key(j, "tiers");
    jw_array_begin(j);
    for (int i = 0; i < db_rows(res); i++) {
        if (db_null(res, i, C_TIER_ID))
            continue;
        jw_object_begin(j);
        jw_kv_string(j, "id", db_text(res, i, C_TIER_ID));
        jw_kv_string(j, "name", db_text(res, i, C_TIER_NAME));
        jw_kv_string(j, "description", db_text(res, i, C_TIER_DESCRIPTION));
        jw_kv_money(j, "price", db_int(res, i, C_TIER_PRICE), exponent);
        jw_kv_string(j, "currency", currency);
        jw_kv_raw(j, "licence", db_text(res, i, C_TIER_LICENCE));
        jw_object_end(j);
    }
    jw_array_end(j);
}

bool product_get_plan(request *r, catalogue_read *read)
{
    read->stmt = &product_get;
    read->params[0] = r->in.id; /* a product's id (routes.c) */
    read->params[1] = r->caller.mode;
    return true;
}

void product_get_render(request *r, const catalogue_read *read, db_result *res)
{
    (void)read;
    if (db_rows(res) == 0) {
        respond_missing(r, "product");
        return;
    }
    int exponent = (int)db_int(res, 0, C_EXPONENT);
    const char *currency = db_text(res, 0, C_CURRENCY);
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, 0, C_ID));
    jw_kv_string(j, "title", db_text(res, 0, C_TITLE));
    jw_kv_string(j, "description", db_text(res, 0, C_DESCRIPTION));
    jw_kv_string(j, "category", db_text(res, 0, C_CATEGORY));
    jw_kv_money(j, "price", db_int(res, 0, C_PRICE), exponent);
    jw_kv_string(j, "currency", currency);
    jw_kv_string(j, "seller", db_text(res, 0, C_SELLER));
    write_tiers(j, res, exponent, currency);
    jw_key(j, "rating");
    jw_object_begin(j);
    if (db_null(res, 0, C_RATING_AVG))
        jw_kv_null(j, "average");
    else
        jw_kv_raw(j, "average", db_text(res, 0, C_RATING_AVG));
    jw_kv_int(j, "count", db_int(res, 0, C_RATING_COUNT));
    jw_object_end(j);
    jw_kv_string(j, "created_at", db_text(res, 0, C_CREATED));
    jw_kv_string(j, "updated_at", db_text(res, 0, C_UPDATED));
    jw_object_end(j);
}
