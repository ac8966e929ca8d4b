/* DELETE /v1/webhooks/:id: removes one of the caller's subscriptions (docs/contract.md
 * section 13): {"id","object":"webhook_subscription","deleted":true}; a second DELETE, like
 * any id this account and mode do not have, is 404.
 *
 * Nothing more is sent to it from the answer on. One statement marks the subscription
 * deleted (the event triggers queue nothing for it from its commit on) and ends its
 * pending deliveries as endpoint_deleted, unsent. A delivery whose send a drainer has
 * already begun (send_started_at, set under the same row lock: store_begin_send in
 * app/webhookd/store.c) is left to that send, which started before this DELETE in the
 * database's order; any retry of it ends as endpoint_deleted. The row stays, status
 * deleted, so that the deliveries of past events still name it. Honours Idempotency-Key
 * like every change. */
#include "handlers.h"
#include "subscription.h"

DB_STMT(webhook_delete,
        "WITH s AS ("
        " UPDATE webhook_subscriptions SET status = 'deleted', updated_at = now()"
        "  WHERE id = $1 AND account_id = $2 AND mode = $3 AND status <> 'deleted'"
        " RETURNING id),"
        " ended AS ("
        " UPDATE webhook_deliveries d"
        "    SET status = 'endpoint_deleted', lease_until = NULL, leased_by = NULL"
        "   FROM s WHERE d.subscription_id = s.id AND d.status = 'pending'"
        "    AND d.send_started_at IS NULL)"
        " SELECT id FROM s",
        3);

static void delete_subscription(request *r, const char *id)
{
    const char *params[] = {id, r->caller.account_id, r->caller.mode};
    if (!subscription_found(r, request_query(r, &webhook_delete, params)))
        return;
    respond_json(r, 200);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "id", id);
    jw_kv_string(j, "object", "webhook_subscription");
    jw_kv_bool(j, "deleted", true);
    jw_object_end(j);
}

void handle_webhooks_delete(request *r)
{
    subscription_act_without_body(r, delete_subscription);
}
