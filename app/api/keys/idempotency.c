/* idempotency: the statements behind Idempotency-Key (idempotency.h): the claim of a
 * key's record, the read of a record another request holds, and the stored answer,
 * committed with the handler's effect. What the record means for the request (run,
 * replay, 409) is idempotency_rules.c's. */
#include "idempotency.h"

#include <stdio.h>
#include <string.h>

#include "crypto.h"

/* Claims the key. A fresh key inserts; a key whose row is older than the window takes the
 * row over; a live key conflicts and returns nothing, after waiting for the transaction
 * that holds it (if any) to end. The conflicting row stays locked until we end ours. */
DB_STMT(idem_claim,
        "INSERT INTO idempotency_keys AS k"
        "       (api_key_id, idem_key, route, request_hash, status, body)"
        " VALUES ($1::bigint, $2, $3, decode($4, 'hex'), 0, '')"
        " ON CONFLICT (api_key_id, idem_key) DO UPDATE"
        "   SET route = EXCLUDED.route, request_hash = EXCLUDED.request_hash,"
        "       status = 0, body = '', created_at = now()"
        " WHERE k.created_at <= now() - " IDEM_WINDOW_SQL " RETURNING 1",
        4);

/* Run as a statement of its own after a conflict: its snapshot is taken after the wait,
 * so it sees the row the other transaction committed (one statement with the INSERT
 * would not). */
DB_STMT(idem_read,
        "SELECT request_hash = decode($3, 'hex'), status, body FROM idempotency_keys"
        " WHERE api_key_id = $1::bigint AND idem_key = $2",
        3);
enum { READ_SAME_REQUEST, READ_STATUS, READ_BODY }; /* idem_read's columns */

DB_STMT(idem_store,
        "UPDATE idempotency_keys SET status = $3::smallint, body = $4"
        " WHERE api_key_id = $1::bigint AND idem_key = $2",
        4);

/* The key is taken and live: replay its response, or refuse another request under it. */
static bool answer_existing(request *r, const char *hash)
{
    const char *params[] = {r->caller.key_id, r->idempotency_key, hash};
    db_result *res = request_query(r, &idem_read, params);
    if (res == NULL)
        return false;
    bool found = db_rows(res) == 1;
    const idem_record record = {
        .claimed = false,
        .same_request = found && db_bool(res, 0, READ_SAME_REQUEST),
        .status = found ? (int)db_int(res, 0, READ_STATUS) : 0,
    };
    switch (idem_record_verdict(&record)) {
    case IDEM_RUN: /* not for a record that was not claimed */
    case IDEM_CONFLICT:
        return respond_error(r, 409, "invalid_request_error", "idempotency_conflict", NULL,
                             "this Idempotency-Key was used with another request");
    case IDEM_IN_PROGRESS:
        return respond_error(r, 409, "invalid_request_error", "idempotency_conflict", NULL,
                             "a request with this Idempotency-Key is still in progress");
    case IDEM_REPLAY:
        break;
    }
    buf_clear(r->body);
    if (!crypto_open(r->w->idem_key, db_text(res, 0, READ_BODY), r->body))
        return respond_internal(r); /* altered at rest, or another server secret */
    r->status = record.status;
    response_header(r, "Idempotent-Replayed", "true");
    return false;
}

/* The Idempotency-Key header's form: false (400 answered) when it is refused. */
static bool header_valid(request *r, idem_header verdict)
{
    if (verdict == IDEM_KEY_REPEATED)
        return respond_invalid(r, "idempotency_key_invalid", "Idempotency-Key",
                               "Idempotency-Key must be sent once");
    if (verdict == IDEM_KEY_INVALID)
        return respond_invalid(r, "idempotency_key_invalid", "Idempotency-Key",
                               "Idempotency-Key must be 1 to %d printable ASCII characters",
                               IDEM_KEY_MAX);
    return true;
}

bool idem_begin(request *r, const char *route, idem_state *st)
{
    st->active = false;
    idem_header header = idem_header_verdict(r->idempotency_key, r->idempotency_key_repeated);
    if (header == IDEM_NO_KEY)
        return true;
    if (!header_valid(r, header))
        return false;
    char hash[IDEM_FINGERPRINT_LEN + 1];
    idem_fingerprint(r->arena, r->method, route, r->match.param, r->match.param_len, r->json_body,
                     hash);
    if (!db_begin(r->w->db, DB_READ_COMMITTED))
        return respond_unavailable(r);

    const char *params[] = {r->caller.key_id, r->idempotency_key, route, hash};
    db_result *res = request_query(r, &idem_claim, params);
    const idem_record claim = {.claimed = res != NULL && db_rows(res) == 1};
    if (idem_record_verdict(&claim) == IDEM_RUN) {
        st->active = true;
        return true;
    }
    if (res != NULL)
        answer_existing(r, hash);
    db_rollback(r->w->db);
    return false;
}

static bool in_transaction(request *r)
{
    return db_transaction(r->w->db) == DB_TX_OPEN;
}

bool idem_guard(request *r, const idem_state *st)
{
    if (!st->active || in_transaction(r))
        return true;
    return respond_unavailable(r);
}

void idem_finish(request *r, idem_state *st)
{
    if (!st->active)
        return;
    st->active = false;
    bool stores = idem_stores(r->status);
    if (!stores || !in_transaction(r)) {
        if (stores)
            respond_unavailable(r); /* the transaction, effect included, is gone */
        db_rollback(r->w->db);
        return;
    }
    db_arg status;
    /* Stored responses hold secrets (a webhook's whsec_, a download URL): sealed at rest. */
    buf *sealed = request_buf(r, r->body->len * 4 / 3 + 64);
    crypto_seal(r->w->idem_key, r->body->data, r->body->len, sealed);
    const char *params[] = {r->caller.key_id, r->idempotency_key, db_arg_int(&status, r->status),
                            sealed->data};
    db_result *stored = request_query(r, &idem_store, params);
    if (stored == NULL) {
        db_rollback(r->w->db);
        return;
    }
    if (!db_commit(r->w->db))
        respond_unavailable(r); /* neither the effect nor the stored response remains */
}

void idem_run(request *r, idem_effect *effect)
{
    idem_state st;
    if (!idem_begin(r, r->route_label, &st))
        return;
    if (idem_guard(r, &st))
        effect(r, st.active);
    idem_finish(r, &st);
}
