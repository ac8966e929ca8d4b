/* GET /v1/orders: the orders the caller's account bought in the key's mode, newest first,
 * each with its items and its downloads. Pending orders are never shown.
 *
 * One statement returns the page as flat rows, ordered so that the JSON can be written
 * in one pass: per order, its order row, then its item rows, then its download rows,
 * each download of a paid order with its newest link that has 5 minutes left. The order
 * after the page is fetched as a bare order row only, to learn whether a next page
 * exists. Downloads of paid orders that have no such link get one, all minted by one
 * more statement; a listing that finds every link in place costs one round trip.
 *
 * Two listings racing may both mint a link for the same download: both links work, and
 * later listings show the newer. Cheaper than serialising listings. */
#include <stdio.h>
#include <string.h>

#include "cursor.h"
#include "db_array.h"
#include "handlers.h"
#include "links.h"
#include "paging.h"

enum kind { K_ORDER = 0, K_ITEM = 1, K_DOWNLOAD = 2 };

/* $1 account, $2 mode, $3 limit, then the status filter and the cursor when present.
 * Columns shared by every kind: kind, rank in page; then per kind (NULL elsewhere). Rows
 * are ordered by rank, kind, position, then tier or file id (columns 2, 1, 10, 13). */
/* Kept out of clang-format, which would re-flow the SQL around the SQL_UTC_TEXT calls. */
/* clang-format off */
#define ORDERS_SQL(filter)                                                                      \
    "WITH page AS ("                                                                            \
    "  SELECT o.id, o.status, o.created_at, o.currency, c.exponent,"                            \
    "         row_number() OVER (ORDER BY o.created_at DESC, o.id DESC) AS rank"                \
    "    FROM orders o JOIN currencies c ON c.code = o.currency"                                \
    "   WHERE o.account_id = $1 AND o.mode = $2" filter                                         \
    "   ORDER BY o.created_at DESC, o.id DESC LIMIT $3::integer + 1)"                           \
    "SELECT 0 AS kind, p.rank, p.id, p.status, " SQL_UTC_TEXT("p.created_at") ","               \
    "       p.currency, p.exponent,"                                                            \
    "       (SELECT coalesce(sum(i.price_minor), 0) FROM order_items i WHERE i.order_id = p.id)," \
    "       p.created_at::text, NULL::smallint AS position,"                                    \
    "       NULL, NULL, NULL, NULL, NULL::bigint, NULL, NULL, NULL::bigint, NULL, NULL"         \
    "  FROM page p"                                                                             \
    " UNION ALL "                                                                               \
    "SELECT 1, p.rank, NULL, NULL, NULL, NULL, NULL, NULL, NULL, i.position,"                   \
    "       i.product_id, i.title, i.tier_id, i.tier_name, i.price_minor,"                      \
    "       NULL, NULL, NULL, NULL, NULL"                                                       \
    "  FROM page p JOIN order_items i ON i.order_id = p.id"                                     \
    " WHERE p.rank <= $3::integer"                                                              \
    " UNION ALL "                                                                               \
    "SELECT 2, p.rank, NULL, p.status, NULL, NULL, NULL, NULL, NULL, d.position,"               \
    "       f.product_id, NULL, d.file_id, NULL, NULL,"                                         \
    "       d.id, f.filename, f.size_bytes, encode(t.link_id, 'hex'),"                          \
    "       " SQL_UTC_TEXT("t.expires_at")                                                      \
    "  FROM page p JOIN downloads d ON d.order_id = p.id JOIN files f ON f.id = d.file_id"     \
    "  LEFT JOIN LATERAL ("                                                                     \
    "    SELECT t.link_id, t.expires_at FROM download_tokens t"                                 \
    "     WHERE p.status = 'paid' AND t.download_id = d.id AND t.link_id IS NOT NULL"           \
    "       AND t.revoked_at IS NULL AND t.expires_at >= now() + " LINK_MIN_LEFT_SQL            \
    "     ORDER BY t.created_at DESC, t.id DESC LIMIT 1) t ON true"                             \
    " WHERE p.rank <= $3::integer"                                                              \
    " ORDER BY 2, 1, 10, 13"
/* clang-format on */

#define ONLY_SHOWN " AND o.status IN ('paid', 'refunded')"
#define BY_STATUS " AND o.status = $4"

DB_STMT(orders_first, ORDERS_SQL(ONLY_SHOWN), 3);
DB_STMT(orders_next, ORDERS_SQL(ONLY_SHOWN " AND (o.created_at, o.id) < ($4::timestamptz, $5)"), 5);
DB_STMT(orders_status_first, ORDERS_SQL(BY_STATUS), 4);
DB_STMT(orders_status_next,
        ORDERS_SQL(BY_STATUS " AND (o.created_at, o.id) < ($5::timestamptz, $6)"), 6);

/* Column numbers of the statement above. */
enum {
    C_KIND,
    C_RANK,
    C_ORDER_ID,
    C_STATUS,
    C_CREATED,
    C_CURRENCY,
    C_EXPONENT,
    C_TOTAL,
    C_CREATED_KEY,
    C_POSITION,
    C_PRODUCT,
    C_TITLE,
    C_TIER,
    C_TIER_NAME,
    C_PRICE,
    C_DOWNLOAD,
    C_FILENAME,
    C_SIZE,
    C_LINK_ID,
    C_LINK_EXPIRES
};

/* Links for the downloads of paid orders that have none, all in one statement: the same
 * now() gives them all the same expiry, which is the one value returned. */
DB_STMT(orders_mint_links,
        "WITH ins AS ("
        "  INSERT INTO download_tokens (download_id, token_hash, link_id, expires_at)"
        "  SELECT m.download, decode(m.hash, 'hex'), decode(m.id, 'hex'),"
        "         now() + make_interval(secs => $4::integer)"
        "    FROM unnest($1::text[], $2::text[], $3::text[]) AS m(download, hash, id)"
        "  RETURNING expires_at)"
        "SELECT " SQL_UTC_TEXT("min(expires_at)") " FROM ins",
        4);

typedef struct {
    const char *status; /* NULL: paid and refunded */
    const char *cursor_text;
    char *after[2]; /* created_at, id of the last order of the previous page */
    int limit;
} list_input;

/* The URL and expiry shown for each download row; NULL for other rows and refunds. */
typedef struct {
    const char **url;
    const char **expires;
} links_shown;

/* The values of status (routes.c), as the statements take them. */
const char *const orders_statuses[] = {"paid", "refunded", NULL};

static void read_input(request *r, list_input *in)
{
    in->status = r->in.status >= 0 ? orders_statuses[r->in.status] : NULL;
    in->cursor_text = r->in.cursor;
    in->limit = (int)r->in.limit;
}

/* The cursor is bound to the route, the mode, the account and the status filter. */
static void build_context(request *r, const list_input *in, buf *ctx)
{
    buf_printf(ctx, "%s;", r->route_label);
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "account", r->caller.account_id);
    cursor_context_add(ctx, "status", in->status);
}

static db_result *fetch_page(request *r, const list_input *in)
{
    char limit[16];
    snprintf(limit, sizeof limit, "%d", in->limit);
    const char *params[6] = {r->caller.account_id, r->caller.mode, limit};
    int n = 3;
    if (in->status != NULL)
        params[n++] = in->status;
    if (in->cursor_text != NULL) {
        params[n++] = in->after[0];
        params[n++] = in->after[1];
    }
    db_stmt *stmt = in->status != NULL
                        ? (in->cursor_text ? &orders_status_next : &orders_status_first)
                        : (in->cursor_text ? &orders_next : &orders_first);
    return request_query(r, stmt, params);
}

static bool needs_link(const db_result *res, int row)
{
    return db_int(res, row, C_KIND) == K_DOWNLOAD &&
           strcmp(db_text(res, row, C_STATUS), "paid") == 0 && db_null(res, row, C_LINK_ID);
}

/* Mints the missing links and fills shown for every download row of a paid order. */
static bool mint_missing(request *r, const db_result *res, int rows, links_shown *shown)
{
    buf *downloads = request_buf(r, 256), *hashes = request_buf(r, 256), *ids = request_buf(r, 256);
    int missing = 0;
    for (int i = 0; i < rows; i++) {
        if (!needs_link(res, i))
            continue;
        link_fresh link;
        link_generate(r->w, &link);
        db_array_append(downloads, db_text(res, i, C_DOWNLOAD));
        db_array_append(hashes, link.hash_hex);
        db_array_append(ids, link.id_hex);
        shown->url[i] = link_url(r, link.token);
        missing++;
    }
    bool ok = true;
    if (missing > 0) {
        db_array_end(downloads);
        db_array_end(hashes);
        db_array_end(ids);
        char ttl[16];
        snprintf(ttl, sizeof ttl, "%ld", r->w->cfg.download_ttl);
        const char *params[] = {downloads->data, hashes->data, ids->data, ttl};
        db_result *minted = request_query(r, &orders_mint_links, params);
        ok = minted != NULL;
        for (int i = 0; ok && i < rows; i++) {
            if (needs_link(res, i))
                shown->expires[i] = db_text(minted, 0, 0);
        }
    }
    return ok;
}

/* Rebuilds the URL of every existing link on the page, then mints the missing ones. */
static bool resolve_links(request *r, const db_result *res, int rows, links_shown *shown)
{
    shown->url = arena_alloc(r->arena, sizeof *shown->url * (size_t)(rows + 1));
    shown->expires = arena_alloc(r->arena, sizeof *shown->expires * (size_t)(rows + 1));
    memset(shown->url, 0, sizeof *shown->url * (size_t)(rows + 1));
    memset(shown->expires, 0, sizeof *shown->expires * (size_t)(rows + 1));
    for (int i = 0; i < rows; i++) {
        if (db_null(res, i, C_LINK_ID))
            continue;
        char token[LINK_TOKEN_LEN + 1];
        if (!link_token_from_hex(r->w, db_text(res, i, C_LINK_ID), token))
            return respond_internal(r);
        shown->url[i] = link_url(r, token);
        shown->expires[i] = db_text(res, i, C_LINK_EXPIRES);
    }
    return mint_missing(r, res, rows, shown);
}

static void write_item(json_writer *j, const db_result *res, int row, int exponent)
{
    jw_object_begin(j);
    jw_kv_string(j, "product", db_text(res, row, C_PRODUCT));
    jw_kv_string(j, "title", db_text(res, row, C_TITLE));
    jw_kv_string(j, "tier", db_text(res, row, C_TIER));
    jw_kv_string(j, "tier_name", db_text(res, row, C_TIER_NAME));
    jw_kv_money(j, "price", db_int(res, row, C_PRICE), exponent);
    jw_object_end(j);
}

static void write_download(json_writer *j, const db_result *res, int row, const links_shown *shown)
{
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, row, C_DOWNLOAD));
    jw_kv_string(j, "product", db_text(res, row, C_PRODUCT));
    jw_kv_string(j, "filename", db_text(res, row, C_FILENAME));
    jw_kv_int(j, "size_bytes", db_int(res, row, C_SIZE));
    jw_kv_string(j, "url", shown->url[row]); /* NULL writes null */
    jw_kv_string(j, "expires_at", shown->expires[row]);
    jw_object_end(j);
}

/* Writes the order at row `first` with the item and download rows that follow it;
 * returns the row after them. */
static int write_order(json_writer *j, const db_result *res, int first, int rows,
                       const links_shown *shown)
{
    int exponent = (int)db_int(res, first, C_EXPONENT);
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, first, C_ORDER_ID));
    jw_kv_string(j, "status", db_text(res, first, C_STATUS));
    jw_kv_string(j, "created_at", db_text(res, first, C_CREATED));
    jw_kv_string(j, "currency", db_text(res, first, C_CURRENCY));
    jw_kv_money(j, "total", db_int(res, first, C_TOTAL), exponent);
    int row = first + 1;
    jw_key(j, "items");
    jw_array_begin(j);
    for (; row < rows && db_int(res, row, C_KIND) == K_ITEM; row++)
        write_item(j, res, row, exponent);
    jw_array_end(j);
    jw_key(j, "downloads");
    jw_array_begin(j);
    for (; row < rows && db_int(res, row, C_KIND) == K_DOWNLOAD; row++)
        write_download(j, res, row, shown);
    jw_array_end(j);
    jw_object_end(j);
    return row;
}

static void write_page(request *r, const db_result *res, const list_input *in, const char *ctx,
                       const links_shown *shown)
{
    int rows = db_rows(res);
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    int row = 0, orders = 0, last = -1;
    while (row < rows && orders < in->limit) {
        last = row;
        row = write_order(j, res, row, rows, shown);
        orders++;
    }
    jw_array_end(j);
    /* Rows left over are the bare order row that follows the page. */
    if (row < rows) {
        const char *key[2] = {db_text(res, last, C_CREATED_KEY), db_text(res, last, C_ORDER_ID)};
        paging_write_next(r, ctx, key, 2);
    } else {
        paging_write_next(r, ctx, NULL, 0);
    }
    jw_object_end(j);
}

void handle_orders_list(request *r)
{
    list_input in;
    memset(&in, 0, sizeof in);
    read_input(r, &in);
    buf *ctx = request_buf(r, 256);
    build_context(r, &in, ctx);
    if (!paging_cursor(r, ctx->data, in.cursor_text, in.after, 2))
        return;
    db_result *res = fetch_page(r, &in);
    links_shown shown;
    if (res == NULL || !resolve_links(r, res, db_rows(res), &shown))
        return;
    write_page(r, res, &in, ctx->data, &shown);
}
