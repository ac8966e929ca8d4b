/* POST /v1/webhooks/:id/test: queues a webhook.test event for one of the caller's
 * subscriptions, through the same outbox, signing and retries as any event, and answers
 * 202 with the event: exactly the payload that will be delivered (docs/contract.md
 * section 13). Its data is {"subscription": id}. The event goes to that subscription
 * alone, whatever kinds it asked for; a disabled one gets the event recorded and its
 * delivery ended unsent, as every delivery of a disabled subscription
 * (013_webhook_test_event.sql). No body (a field is parameter_unknown). Honours
 * Idempotency-Key: a replay answers the same event and queues nothing more. */
#include "handlers.h"
#include "idempotency.h"
#include "subscription.h"

DB_STMT(webhook_test_event, "SELECT event_id, event_body FROM webhook_emit_test($1, $2, $3)", 3);

static void queue_test_event(request *r, bool in_transaction)
{
    (void)in_transaction; /* one statement: atomic on its own */
    const char *id = r->in.id;
    const char *params[] = {id, r->caller.account_id, r->caller.mode};
    db_result *res = request_query(r, &webhook_test_event, params);
    if (!subscription_found(r, res))
        return;
    respond_json(r, 202);
    jw_raw(&r->json, db_text(res, 0, 1));
}

void handle_subscription_test(request *r)
{
    idem_run(r, queue_test_event);
}
