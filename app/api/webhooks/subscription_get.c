/* GET /v1/webhooks/:id: one of the caller's subscriptions in the key's mode (docs/contract.md
 * section 13). Another account's, the other mode's, a deleted one, or an id of the wrong
 * shape: 404 resource_missing, never 403. */
#include "handlers.h"
#include "subscription.h"

DB_STMT(webhook_get,
        "SELECT " SUBSCRIPTION_COLUMNS " FROM webhook_subscriptions s"
        " WHERE s.id = $1 AND s.account_id = $2 AND s.mode = $3 AND s.status <> 'deleted'",
        3);

void handle_subscription_get(request *r)
{
    const char *params[] = {r->in.id, r->caller.account_id, r->caller.mode};
    subscription_respond(r, request_query(r, &webhook_get, params));
}
