/* POST /v1/webhooks/:id/rotate_secret: a new signing secret for one of the caller's
 * subscriptions, shown once in the answer (the subscription object with "secret";
 * docs/contract.md section 13).
 *
 * The secret it replaces keeps signing for expire_old_in seconds (optional body field,
 * 0..604800, routes.c; default MARKET_WEBHOOK_SECRET_GRACE, 24 h): until then every delivery
 * carries two signatures, space-separated in webhook-signature, as the Standard Webhooks
 * specification allows, so that a receiver verifies with either secret and switches at its
 * own pace. 0 ends the old one at once. Only one previous secret is kept: rotating again
 * within the grace drops the oldest. Honours Idempotency-Key: the replay shows the same
 * new secret (kept, like a creation's, among the idempotency records for 24 hours). */
#include <stdio.h>

#include "handlers.h"
#include "idempotency.h"
#include "subscription.h"

/* $1 id, $2 account, $3 mode, $4 the new sealed secret, $5 seconds the old one keeps
 * signing (0: none). */
DB_STMT(webhook_rotate_secret,
        "UPDATE webhook_subscriptions s"
        "   SET previous_secret_sealed = CASE WHEN $5::integer > 0 THEN s.secret_sealed END,"
        "       previous_secret_expires_at = CASE WHEN $5::integer > 0"
        "           THEN now() + make_interval(secs => $5::integer) END,"
        "       secret_sealed = $4, updated_at = now()"
        " WHERE s.id = $1 AND s.account_id = $2 AND s.mode = $3 AND s.status <> 'deleted'"
        " RETURNING " SUBSCRIPTION_COLUMNS,
        5);

static void rotate(request *r, bool in_transaction)
{
    (void)in_transaction; /* one statement: atomic on its own */
    const char *id = r->in.id;
    long expire_old_in = r->in.expire_old_in;
    buf *sealed = request_buf(r, 128);
    const char *secret = subscription_new_secret(r, sealed);
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%ld", expire_old_in);
    const char *params[] = {id, r->caller.account_id, r->caller.mode, sealed->data, seconds};
    db_result *res = request_query(r, &webhook_rotate_secret, params);
    if (!subscription_found(r, res))
        return;
    respond_json(r, 200);
    subscription_write(&r->json, res, 0, 0, secret);
}

void handle_subscription_rotate_secret(request *r)
{
    idem_run(r, rotate);
}
