/* GET /v1/webhooks: the caller's subscriptions in the key's mode, newest first, in the
 * list envelope (docs/contract.md sections 5 and 13); deleted ones are never shown. Keyset
 * pagination on (created_at, id) through webhook_subscriptions_list
 * (011_webhook_endpoints.sql). */
#include <stdio.h>
#include <string.h>

#include "handlers.h"
#include "paging.h"
#include "subscription.h"

/* $1 account, $2 mode, $3 limit; then the cursor's created_at and id. One row more than
 * the page tells whether a next page exists. */
#define LIST_SQL(after)                                                                            \
    "SELECT " SUBSCRIPTION_COLUMNS ", s.created_at::text FROM webhook_subscriptions s"             \
    " WHERE s.account_id = $1 AND s.mode = $2 AND s.status <> 'deleted'" after                     \
    " ORDER BY s.created_at DESC, s.id DESC LIMIT $3::integer + 1"

DB_STMT(subscriptions_first, LIST_SQL(""), 3);
DB_STMT(subscriptions_next, LIST_SQL(" AND (s.created_at, s.id) < ($4::timestamptz, $5)"), 5);

#define C_CREATED_KEY SUBSCRIPTION_NCOLS /* the cursor's key, full precision */

static void write_subscription(json_writer *j, const db_result *res, int row)
{
    subscription_write(j, res, row, 0, NULL);
}

void handle_subscriptions_list(request *r)
{
    const char *cursor_text = r->in.cursor;
    int limit = (int)r->in.limit;
    /* The cursor is bound to the route, the mode and the account. */
    buf *ctx = paging_account_context(r);
    char *after[2] = {NULL, NULL};
    if (!paging_cursor(r, ctx->data, cursor_text, after, 2))
        return;

    char limit_text[16];
    snprintf(limit_text, sizeof limit_text, "%d", limit);
    const char *params[] = {r->caller.account_id, r->caller.mode, limit_text, after[0], after[1]};
    db_result *res =
        request_query(r, cursor_text != NULL ? &subscriptions_next : &subscriptions_first, params);
    if (res == NULL)
        return;

    paging_respond(r, ctx->data, res, limit, C_CREATED_KEY, 0, write_subscription);
}
