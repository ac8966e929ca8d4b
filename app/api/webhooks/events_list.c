/* GET /v1/events: the caller's events in the key's mode, newest first, in the list envelope
 * (docs/contract.md sections 5 and 13), for the retention period. Each item is exactly the
 * payload that was (or will be) delivered, byte for byte the events row, so that a
 * receiver that was down past the retry schedule can reconcile.
 *
 * Filters: type (one event type), created_gte and created_lt (RFC 3339, routes.c). Keyset
 * pagination on (created_at, id) through events_list, or events_list_type with a type
 * (014_events_api.sql): a statement per shape, the time range always bound (-infinity and
 * infinity when not given), so each plan is the index's range scan whatever the page. */
#include <stdio.h>

#include "cursor.h"
#include "handlers.h"
#include "paging.h"

/* $1 account, $2 mode, $3 limit, $4 created_gte, $5 created_lt; then the type and the
 * cursor's created_at and id when present, in that order. */
#define EVENTS_SQL(filter)                                                                         \
    "SELECT e.body, e.created_at::text, e.id FROM events e"                                        \
    " WHERE e.account_id = $1 AND e.mode = $2"                                                     \
    "   AND e.created_at >= $4::timestamptz AND e.created_at < $5::timestamptz" filter             \
    " ORDER BY e.created_at DESC, e.id DESC LIMIT $3::integer + 1"

DB_STMT(events_first, EVENTS_SQL(""), 5);
DB_STMT(events_next, EVENTS_SQL(" AND (e.created_at, e.id) < ($6::timestamptz, $7)"), 7);
DB_STMT(events_type_first, EVENTS_SQL(" AND e.type = $6"), 6);
DB_STMT(events_type_next,
        EVENTS_SQL(" AND e.type = $6 AND (e.created_at, e.id) < ($7::timestamptz, $8)"), 8);

enum { C_BODY, C_CREATED_KEY, C_ID };

/* The types GET /v1/events filters on (routes.c): the four kinds and the test event. */
const char *const event_types[] = {"sale.completed", "sale.refunded", "review.created",
                                   "payout.sent",    "webhook.test",  NULL};

/* The payload as delivered, byte for byte. */
static void write_event(json_writer *j, const db_result *res, int row)
{
    jw_raw(j, db_text(res, row, C_BODY));
}

void handle_events_list(request *r)
{
    const char *type = r->in.type >= 0 ? event_types[r->in.type] : NULL;
    /* The bounds as given: PostgreSQL reads each the same instant (app/api/http/input.h). */
    const char *gte = r->in.created_gte.text;
    const char *lt = r->in.created_lt.text;
    const char *cursor_text = r->in.cursor;
    int limit = (int)r->in.limit;
    /* The cursor is bound to the route, the mode, the account and every filter. */
    buf *ctx = paging_account_context(r);
    cursor_context_add(ctx, "type", type);
    cursor_context_add(ctx, "created_gte", gte);
    cursor_context_add(ctx, "created_lt", lt);
    char *after[2] = {NULL, NULL};
    if (!paging_cursor(r, ctx->data, cursor_text, after, 2))
        return;

    db_arg limit_arg;
    const char *params[8] = {r->caller.account_id, r->caller.mode, db_arg_int(&limit_arg, limit),
                             gte != NULL ? gte : "-infinity", lt != NULL ? lt : "infinity"};
    int n = 5;
    if (type != NULL)
        params[n++] = type;
    params[n++] = after[0];
    params[n] = after[1];
    db_stmt *stmt = type != NULL ? (cursor_text ? &events_type_next : &events_type_first)
                                 : (cursor_text ? &events_next : &events_first);
    db_result *res = request_query(r, stmt, params);
    if (res == NULL)
        return;

    paging_respond(r, ctx->data, res, limit, C_CREATED_KEY, C_ID, write_event);
}
