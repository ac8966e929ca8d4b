/* GET /v1/sellers/:id: a seller's profile (shared by both modes) with the number of
 * published products and one page of its catalogue in the caller's mode, newest first.
 * One statement: the profile columns repeat on every product row, and a seller with no
 * product in this mode comes back as one row with NULL product columns. */
#include <stdio.h>
#include <string.h>

#include "catalogue.h"
#include "cursor.h"
#include "handlers.h"
#include "hash.h"
#include "paging.h"

/* The SQL is laid out by hand: clang-format would re-flow it mid-clause. COUNTED or
 * COUNT_KNOWN: the product count counted once (a LATERAL, not a subquery that would run for
 * every product row), or NULL when the worker keeps it (see count_memo). */
/* clang-format off */
#define SELLER_SQL(count, keyset)                                                               \
    "SELECT s.id, s.name, s.bio, s.website,"                                                    \
    "       to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"        \
    "       n.count,"                                                                           \
    "       " PRODUCT_ITEM_COLUMNS ", p.created_at" /* as text: see products_list.c */          \
    "  FROM sellers s"                                                                          \
    count                                                                                       \
    "  LEFT JOIN LATERAL (SELECT * FROM products p"                                             \
    "                      WHERE p.seller_id = s.id AND p.mode = $2 AND p.status = 'published'" \
    keyset                                                                                      \
    "                      ORDER BY p.created_at DESC, p.id DESC LIMIT $3) p ON true"           \
    " WHERE s.id = $1"                                                                          \
    " ORDER BY p.created_at DESC, p.id DESC"
#define COUNTED                                                                                 \
    "  CROSS JOIN LATERAL (SELECT count(*) FROM products c"                                     \
    "       WHERE c.seller_id = s.id AND c.mode = $2 AND c.status = 'published') n"
#define COUNT_KNOWN "  CROSS JOIN (SELECT NULL::bigint AS count) n"
#define KEYSET_SQL " AND (p.created_at, p.id) < ($4::timestamptz, $5)"
/* clang-format on */

DB_STMT(seller_first_page, SELLER_SQL(COUNTED, ""), 3);
DB_STMT(seller_next_page, SELLER_SQL(COUNTED, KEYSET_SQL), 5);
DB_STMT(seller_first_page_known, SELLER_SQL(COUNT_KNOWN, ""), 3);
DB_STMT(seller_next_page_known, SELLER_SQL(COUNT_KNOWN, KEYSET_SQL), 5);
DB_STMT(seller_count,
        "SELECT count(*) FROM products c"
        " WHERE c.seller_id = $1 AND c.mode = $2 AND c.status = 'published'",
        2);

#define HANDLE_MAX 255 /* the path parameter's bound (routes.c) */

/* The product counts this worker read, so that a seller with tens of thousands of
 * products is counted once per catalogue change, not once per request: a count is remembered
 * for the catalogue generation it was read in (worker.catalogue_generation), and a
 * notified write makes every remembered count stale at once. Losing one costs a count, never a
 * wrong answer. A small table indexed by a hash of seller and mode; a collision replaces. */
#define COUNT_MEMOS 256
typedef struct {
    char key[HANDLE_MAX + 8]; /* "handle|mode" */
    long long count;
    unsigned long generation;
} count_memo;
static count_memo count_memos[COUNT_MEMOS];

static count_memo *memo_slot(const char *key)
{
    return &count_memos[hash_fnv1a(key, strlen(key)) % COUNT_MEMOS];
}

enum {
    C_ID,
    C_NAME,
    C_BIO,
    C_WEBSITE,
    C_CREATED,
    C_COUNT,
    C_ITEM,
    C_KEY = C_ITEM + PRODUCT_ITEM_NCOLS
};

typedef struct {
    int limit;
    const char *context; /* what the cursor is bound to */
    const char *handle;
    char count_key[HANDLE_MAX + 8];
    bool count_known;         /* the statement leaves the count to count_memos */
    long long count;          /* the remembered count, when count_known */
    unsigned long generation; /* the catalogue generation at the plan */
} seller_input;

bool seller_get_plan(request *r, catalogue_read *read)
{
    seller_input *in = arena_alloc(r->arena, sizeof *in);
    read->input = in;
    in->limit = (int)r->in.limit;
    const char *handle = r->in.id; /* a handle (routes.c) */

    buf *ctx = request_buf(r, 128);
    buf_printf(ctx, "%s;", r->route_label);
    cursor_context_add(ctx, "mode", r->caller.mode);
    cursor_context_add(ctx, "seller", handle);
    in->context = arena_strndup(r->arena, ctx->data, ctx->len);

    char *after[2];
    const char *cursor_text = r->in.cursor;
    if (!paging_cursor(r, in->context, cursor_text, after, 2))
        return false;
    in->handle = handle;
    snprintf(in->count_key, sizeof in->count_key, "%s|%s", handle, r->caller.mode);
    in->generation = r->w->catalogue_generation;
    const count_memo *memo = memo_slot(in->count_key);
    in->count_known = memo->generation == in->generation && strcmp(memo->key, in->count_key) == 0;
    in->count = in->count_known ? memo->count : 0;
    if (in->count_known)
        read->stmt = cursor_text != NULL ? &seller_next_page_known : &seller_first_page_known;
    else
        read->stmt = cursor_text != NULL ? &seller_next_page : &seller_first_page;
    read->params[0] = handle;
    read->params[1] = r->caller.mode;
    read->params[2] = arena_printf(r->arena, "%d", in->limit + 1);
    read->params[3] = cursor_text != NULL ? after[0] : NULL;
    read->params[4] = cursor_text != NULL ? after[1] : NULL;
    return true;
}

/* The seller's product count: the statement's, or the remembered one unless a catalogue write
 * was notified since the plan (then it is read again). Keeps what it read. */
static bool product_count(request *r, const seller_input *in, db_result *res, long long *count)
{
    count_memo *memo = memo_slot(in->count_key);
    unsigned long generation = in->generation;
    if (!in->count_known) {
        *count = db_int(res, 0, C_COUNT);
    } else if (generation == r->w->catalogue_generation) {
        *count = in->count;
        return true;
    } else {
        const char *params[2] = {in->handle, r->caller.mode};
        db_result *fresh = request_query(r, &seller_count, params);
        if (fresh == NULL)
            return false;
        *count = db_int(fresh, 0, 0);
        generation = r->w->catalogue_generation; /* read after the write was notified */
    }
    snprintf(memo->key, sizeof memo->key, "%s", in->count_key);
    memo->count = *count;
    memo->generation = generation;
    return true;
}

void seller_get_render(request *r, const catalogue_read *read, db_result *res)
{
    const seller_input *in = read->input;
    if (db_rows(res) == 0) {
        respond_missing(r, "seller");
        return;
    }
    long long count;
    if (!product_count(r, in, res, &count))
        return;
    int rows = db_rows(res);
    if (rows == 1 && db_null(res, 0, C_ITEM))
        rows = 0; /* the seller has no product on this page */
    bool more = rows > in->limit;
    if (more)
        rows = in->limit;

    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, 0, C_ID));
    jw_kv_string(j, "name", db_text(res, 0, C_NAME));
    jw_kv_string(j, "bio", db_text(res, 0, C_BIO));
    jw_kv_string(j, "website", db_null(res, 0, C_WEBSITE) ? NULL : db_text(res, 0, C_WEBSITE));
    jw_kv_string(j, "created_at", db_text(res, 0, C_CREATED));
    jw_kv_int(j, "product_count", count);
    jw_key(j, "products");
    jw_object_begin(j);
    jw_key(j, "data");
    jw_array_begin(j);
    for (int i = 0; i < rows; i++)
        catalogue_write_item(j, res, i, C_ITEM);
    jw_array_end(j);
    if (more) {
        const char *last[2] = {db_text(res, rows - 1, C_KEY), db_text(res, rows - 1, C_ITEM)};
        paging_write_next(r, in->context, last, 2);
    } else {
        paging_write_next(r, in->context, NULL, 0);
    }
    jw_object_end(j);
    jw_object_end(j);
}
