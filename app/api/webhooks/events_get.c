/* GET /v1/events/:id: one of the caller's events in the key's mode, with its deliveries
 * (docs/contract.md section 13): the payload as delivered, with one more member,
 * "deliveries": per subscription, {"subscription","status","attempts","last_attempt_at",
 * "last_status","last_error"} (status pending, delivered, failed or endpoint_deleted; the
 * last three null before any attempt or when they do not apply; attempts counts the
 * attempts whose outcome is recorded, so that it agrees with last_attempt_at while a
 * drainer is in the middle of one). Another account's, the
 * other mode's, a pruned or an unknown event: 404 resource_missing. */
#include <string.h>

#include "handlers.h"
#include "links.h" /* SQL_UTC_TEXT */

/* One row per delivery (one row with NULL delivery columns when there is none), oldest
 * delivery first; the body repeats on each. */
DB_STMT(event_get,
        "SELECT e.body, d.subscription_id, d.status,"
        "       (d.attempts - (d.leased_by IS NOT NULL AND d.status = 'pending')::int)::text,"
        "       " SQL_UTC_TEXT(
            "a.attempted_at") ", d.last_status::text, d.last_error"
                              "  FROM events e"
                              "  LEFT JOIN webhook_deliveries d ON d.event_id = e.id"
                              "  LEFT JOIN LATERAL (SELECT max(x.attempted_at) AS attempted_at"
                              "                       FROM webhook_attempts x WHERE x.delivery_id "
                              "= d.id) a ON true"
                              " WHERE e.id = $1 AND e.account_id = $2 AND e.mode = $3"
                              " ORDER BY d.created_at, d.id",
        3);

enum { C_BODY, C_SUBSCRIPTION, C_STATUS, C_ATTEMPTS, C_LAST_AT, C_LAST_STATUS, C_LAST_ERROR };

static void write_delivery(json_writer *j, const db_result *res, int row)
{
    jw_object_begin(j);
    jw_kv_string(j, "subscription", db_text(res, row, C_SUBSCRIPTION));
    jw_kv_string(j, "status", db_text(res, row, C_STATUS));
    jw_key(j, "attempts");
    jw_raw(j, db_text(res, row, C_ATTEMPTS));
    jw_kv_string(j, "last_attempt_at",
                 db_null(res, row, C_LAST_AT) ? NULL : db_text(res, row, C_LAST_AT));
    jw_key(j, "last_status");
    if (db_null(res, row, C_LAST_STATUS))
        jw_null(j);
    else
        jw_raw(j, db_text(res, row, C_LAST_STATUS));
    jw_kv_string(j, "last_error",
                 db_null(res, row, C_LAST_ERROR) ? NULL : db_text(res, row, C_LAST_ERROR));
    jw_object_end(j);
}

void handle_events_get(request *r)
{
    const char *params[] = {r->in.id, r->caller.account_id, r->caller.mode};
    db_result *res = request_query(r, &event_get, params);
    if (res == NULL)
        return;
    if (db_rows(res) == 0) {
        respond_missing(r, "event");
        return;
    }
    /* The stored payload is one compact JSON object, as delivered: the deliveries join it
     * as its last member, written after its members and before its closing brace. */
    buf *deliveries = request_buf(r, 256);
    json_writer list;
    jw_init(&list, deliveries);
    jw_array_begin(&list);
    for (int i = 0; i < db_rows(res); i++) {
        if (!db_null(res, i, C_SUBSCRIPTION))
            write_delivery(&list, res, i);
    }
    jw_array_end(&list);
    const char *body = db_text(res, 0, C_BODY);
    size_t len = strlen(body);
    if (len < 2 || body[len - 1] != '}') {
        respond_internal(r);
        return;
    }
    buf *event = request_buf(r, len + deliveries->len + 32);
    buf_append(event, body, len - 1);
    buf_puts(event, ",\"deliveries\":");
    buf_append(event, deliveries->data, deliveries->len);
    buf_putc(event, '}');
    respond_json(r, 200);
    jw_raw(&r->json, event->data);
}
