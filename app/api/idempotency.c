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

static bool key_valid(const char *key)
{
    size_t n = strlen(key);
    if (n < 1 || n > IDEM_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (key[i] < 0x20 || key[i] > 0x7e)
            return false;
    }
    return true;
}

/* Appends a length-prefixed field, so that no two different requests share an input. */
static void hash_field(buf *in, const char *data, size_t len)
{
    buf_printf(in, "%zu:", len);
    buf_append(in, data, len);
}

/* Hex SHA-256 of method, route, raw path parameter and the body as parsed. */
static void request_hash(request *r, const char *route, char hex[2 * SHA256_LEN + 1])
{
    buf *in = request_buf(r, 1024);
    hash_field(in, r->method, strlen(r->method));
    hash_field(in, route, strlen(route));
    hash_field(in, r->match.param != NULL ? r->match.param : "", r->match.param_len);
    const char *body = r->json_body != NULL
                           ? json_object_to_json_string_ext(r->json_body, JSON_C_TO_STRING_PLAIN)
                           : "";
    hash_field(in, body, strlen(body));
    uint8_t digest[SHA256_LEN];
    crypto_sha256(in->data, in->len, digest);
    buf_clear(in);
    hex_encode(in, digest, sizeof digest);
    memcpy(hex, in->data, 2 * SHA256_LEN + 1);
}

/* The key is taken and live: replay its response, or refuse another request under it. */
static bool answer_existing(request *r, const char *hash)
{
    const char *params[] = {r->caller.key_id, r->idempotency_key, hash};
    PGresult *res = request_query(r, &idem_read, params);
    if (res == NULL)
        return false;
    if (db_rows(res) != 1 || strcmp(db_text(res, 0, READ_SAME_REQUEST), "t") != 0)
        return respond_error(r, 409, "invalid_request_error", "idempotency_conflict", NULL,
                             "this Idempotency-Key was used with another request");
    int status = (int)db_int(res, 0, READ_STATUS);
    if (status == 0) /* not reachable while claims wait on the index; never replay it */
        return respond_error(r, 409, "invalid_request_error", "idempotency_conflict", NULL,
                             "a request with this Idempotency-Key is still in progress");
    buf_clear(r->body);
    if (!crypto_open(r->w->idem_key, db_text(res, 0, READ_BODY), r->body))
        return respond_internal(r); /* altered at rest, or another server secret */
    r->status = status;
    response_header(r, "Idempotent-Replayed", "true");
    return false;
}

bool idem_begin(request *r, const char *route, idem_state *st)
{
    st->active = false;
    if (r->idempotency_key == NULL)
        return true;
    if (r->idempotency_key_repeated) /* which one would the client mean? */
        return respond_invalid(r, "idempotency_key_invalid", "Idempotency-Key",
                               "Idempotency-Key must be sent once");
    if (!key_valid(r->idempotency_key))
        return respond_invalid(r, "idempotency_key_invalid", "Idempotency-Key",
                               "Idempotency-Key must be 1 to %d printable ASCII characters",
                               IDEM_KEY_MAX);
    char hash[2 * SHA256_LEN + 1];
    request_hash(r, route, hash);
    if (!db_begin(r->w->db, DB_READ_COMMITTED))
        return respond_unavailable(r);

    const char *params[] = {r->caller.key_id, r->idempotency_key, route, hash};
    PGresult *res = request_query(r, &idem_claim, params);
    if (res != NULL && db_rows(res) == 1) {
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
    if (r->status >= 500 || !in_transaction(r)) {
        if (r->status < 500)
            respond_unavailable(r); /* the transaction, effect included, is gone */
        db_rollback(r->w->db);
        return;
    }
    char status[8];
    snprintf(status, sizeof status, "%d", r->status);
    /* Stored responses hold secrets (a webhook's whsec_, a download URL): sealed at rest. */
    buf *sealed = request_buf(r, r->body->len * 4 / 3 + 64);
    crypto_seal(r->w->idem_key, r->body->data, r->body->len, sealed);
    const char *params[] = {r->caller.key_id, r->idempotency_key, status, sealed->data};
    PGresult *stored = request_query(r, &idem_store, params);
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
