/* DELETE /v1/webhooks/:id: removes one of the caller's subscriptions (docs/contract.md
 * section 13): {"id","object":"webhook_subscription","deleted":true}; a second DELETE, like
 * any id this account and mode do not have, is 404.
 *
 * Nothing more is sent to it from the answer on: webhook_subscription_delete
 * (sql/migrations/015_subscription_delete.sql) marks it deleted and ends its pending
 * deliveries as endpoint_deleted, unsent, unless a drainer has already begun to send one.
 * Honours Idempotency-Key like every change. */
#include "handlers.h"
#include "idempotency.h"
#include "subscription.h"

DB_STMT(webhook_delete, "SELECT subscription_id FROM webhook_subscription_delete($1, $2, $3)", 3);

static void delete_subscription(request *r, bool in_transaction)
{
    (void)in_transaction; /* one statement: atomic on its own */
    const char *id = r->in.id;
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

void handle_subscription_delete(request *r)
{
    idem_run(r, delete_subscription);
}
