/* POST /v1/webhooks/:id: changes any of url, events, description and disabled of one of the
 * caller's subscriptions, and answers the updated object (docs/contract.md section 13).
 *
 * The fields follow the rules of creation (routes.c, subscription.c; a new url has its
 * host checked again); a field not given keeps its value; disabled true or false sets the status.
 * Every input check runs before idem_begin, so input errors are never stored under an
 * Idempotency-Key. A subscription that does not exist for this account and mode (deleted
 * included) is 404.
 *
 * Disabling takes effect at once: the event triggers queue nothing for a disabled
 * subscription, and a delivery already queued is not sent (market-webhookd asks the
 * database right before each send: store_begin_send); it fails unsent. */
#include "handlers.h"
#include "idempotency.h"
#include "subscription.h"

/* $1 id, $2 account, $3 mode; then each field, NULL when not given: $4 url, $5 events,
 * $6 description, $7 disabled. updated_at moves only when a value changes ({} or the same
 * values change nothing). */
#define NEW_STATUS                                                                                 \
    "CASE WHEN $7::boolean IS NULL THEN s.status WHEN $7::boolean THEN 'disabled'"                 \
    " ELSE 'enabled' END"
DB_STMT(webhook_update,
        "UPDATE webhook_subscriptions s"
        "   SET url = coalesce($4, s.url), events = coalesce($5::text[], s.events),"
        "       description = coalesce($6, s.description), status = " NEW_STATUS ","
        "       updated_at = CASE WHEN (coalesce($4, s.url), coalesce($5::text[], s.events),"
        "                               coalesce($6, s.description), " NEW_STATUS ")"
        "                              IS DISTINCT FROM (s.url, s.events, s.description, s.status)"
        "                         THEN now() ELSE s.updated_at END"
        " WHERE s.id = $1 AND s.account_id = $2 AND s.mode = $3 AND s.status <> 'deleted'"
        " RETURNING " SUBSCRIPTION_COLUMNS,
        7);

static void update(request *r, bool in_transaction)
{
    (void)in_transaction; /* one statement: atomic on its own */
    const api_input *in = &r->in;
    const char *id = in->id;
    const char *params[] = {id,
                            r->caller.account_id,
                            r->caller.mode,
                            in->url != NULL ? in->url->text : NULL,
                            in->events != 0 ? subscription_events_literal(r, in->events) : NULL,
                            in->description,
                            in->disabled < 0 ? NULL : (in->disabled ? "true" : "false")};
    subscription_respond(r, request_query(r, &webhook_update, params));
}

void handle_subscription_update(request *r)
{
    if (!subscription_check_host(r))
        return;
    idem_run(r, update);
}
