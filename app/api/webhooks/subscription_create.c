/* POST /v1/webhooks: subscribes an HTTPS endpoint to events (docs/contract.md sections 6 and 7).
 *
 * Body {"url", "events", "description"}, declared in routes.c and checked as subscription.c
 * says: url required, events optional (default all four kinds), description optional
 * (default "").
 *
 * Every input check, DNS included, runs before idem_begin, so input errors are never
 * stored under an Idempotency-Key. The subscription limit is state, not input: it is
 * checked inside the transaction and its 400 is stored like any other answer.
 *
 * The secret is "whsec_" + base64(32 random bytes). The subscription keeps it only sealed
 * with the server's webhook-secret key (market-webhookd opens it with the same
 * derivation, "market webhook secret v1" in main.c) and it is shown only in the 201 and
 * its idempotent replay. Because of that replay, a request with an Idempotency-Key leaves
 * the 201 body, secret included, in idempotency_keys for the key's 24-hour window. */
#include <stdio.h>
#include <string.h>

#include "handlers.h"
#include "idempotency.h"
#include "subscription.h"
#include "text.h"

#define SUBSCRIPTIONS_MAX 16 /* subscriptions per account and mode, deleted ones aside */
#define ID_RANDOM_LEN 24

/* Serialises creations per account (both modes): the count below then sees every
 * subscription committed before it. NO KEY UPDATE, unlike UPDATE, does not block the
 * foreign-key checks of rows that reference the account (orders, keys, ...). */
DB_STMT(webhook_lock_account, "SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE", 1);

/* A statement of its own after the lock, so that its snapshot is taken after the wait
 * (in READ COMMITTED each statement sees what committed before it started). */
DB_STMT(webhook_insert,
        "INSERT INTO webhook_subscriptions AS s"
        "       (id, account_id, mode, url, events, description, secret_sealed)"
        " SELECT $1, $2, $3, $4, $5::text[], $6, $7"
        "  WHERE (SELECT count(*) FROM webhook_subscriptions"
        "          WHERE account_id = $2 AND mode = $3 AND status <> 'deleted') < $8::integer"
        " RETURNING " SUBSCRIPTION_COLUMNS,
        8);

/* The subscription object every route answers, with the secret this once. */
static void respond_created(request *r, const db_result *res, const char *secret)
{
    respond_json(r, 201);
    subscription_write(&r->json, res, 0, 0, secret);
}

/* Locks the account, then inserts unless the limit is reached; answers 201 or 400 (or
 * 5xx from request_query). Runs inside a transaction. */
static void insert_subscription(request *r, const api_input *in)
{
    const char *lock_params[] = {r->caller.account_id};
    db_result *res = request_query(r, &webhook_lock_account, lock_params);
    if (res == NULL)
        return;
    if (db_rows(res) != 1) { /* the key's account vanished under it */
        respond_internal(r);
        return;
    }
    char id[4 + ID_RANDOM_LEN] = "we_";
    crypto_random_alnum(id + 3, ID_RANDOM_LEN);
    const char *events = subscription_events_literal(r, in->events);
    char limit[8];
    snprintf(limit, sizeof limit, "%d", SUBSCRIPTIONS_MAX);
    buf *sealed = request_buf(r, 128);
    const char *secret = subscription_new_secret(r, sealed);
    const char *description = in->description != NULL ? in->description : "";
    const char *params[] = {id,     r->caller.account_id, r->caller.mode, in->url->text,
                            events, description,          sealed->data,   limit};
    res = request_query(r, &webhook_insert, params);
    if (res == NULL)
        return;
    if (db_rows(res) == 0) {
        respond_invalid(r, "subscription_limit_reached", NULL,
                        "an account may have at most %d webhook subscriptions in each mode",
                        SUBSCRIPTIONS_MAX);
        return;
    }
    respond_created(r, res, secret);
}

/* Without an Idempotency-Key there is no transaction yet: the lock needs one. */
static void create(request *r, bool in_transaction)
{
    const api_input *in = &r->in;
    if (in_transaction) {
        insert_subscription(r, in);
        return;
    }
    if (!db_begin(r->w->db, DB_READ_COMMITTED)) {
        respond_unavailable(r);
        return;
    }
    insert_subscription(r, in);
    if (r->status >= 500)
        db_rollback(r->w->db);
    else if (!db_commit(r->w->db))
        respond_unavailable(r);
}

void handle_subscription_create(request *r)
{
    if (!subscription_check_host(r))
        return;
    idem_run(r, create);
}
