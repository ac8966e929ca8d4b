/* idempotency_rules: what an Idempotency-Key means for a request (docs/contract.md
 * section 6), apart from the statements that claim, read and store its record
 * (idempotency.c), so that each rule is written once and tested without a database.
 *
 * The record of a key is found under the API key that sent it and the key itself; whether
 * it is older than the window (IDEM_WINDOW_SQL) is the claim statement's comparison with
 * the database's clock, made in the same statement that takes the record, so that twins
 * racing on several workers see one claim. */
#ifndef MARKET_IDEMPOTENCY_RULES_H
#define MARKET_IDEMPOTENCY_RULES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "crypto.h"

#define IDEM_KEY_MAX 255

/* The Idempotency-Key header. */
typedef enum {
    IDEM_NO_KEY,       /* none: the handler runs, nothing is recorded */
    IDEM_KEY_REPEATED, /* sent more than once: 400 idempotency_key_invalid */
    IDEM_KEY_INVALID,  /* not 1..IDEM_KEY_MAX printable ASCII: 400 idempotency_key_invalid */
    IDEM_KEY_VALID,    /* claim its record */
} idem_header;

idem_header idem_header_verdict(const char *key, bool repeated);

/* The key's record, as the claim and the read after it found it. */
typedef struct {
    /* The claim took the record: there was none under (API key, key), or the one there
     * was older than the window. Then nothing below was read. */
    bool claimed;
    /* A record was read after the claim waited for its holder, and its request's
     * fingerprint is this request's. */
    bool same_request;
    int status; /* its stored response's status; 0: its request has not finished */
} idem_record;

typedef enum {
    IDEM_RUN,         /* this request owns the key: run the handler, store its answer */
    IDEM_REPLAY,      /* answer the stored response, with Idempotent-Replayed: true */
    IDEM_CONFLICT,    /* 409 idempotency_conflict: the key was used with another request */
    IDEM_IN_PROGRESS, /* 409 idempotency_conflict: its request is still being served */
} idem_verdict;

idem_verdict idem_record_verdict(const idem_record *record);

/* True when a response of this status is stored for replay: below 500. A failure is
 * rolled back, the effect with it, so that a retry runs again. */
bool idem_stores(int status);

/* The request's fingerprint, as hex SHA-256: method, route label, raw path parameter and
 * body as parsed and written again (so that white space does not matter; NULL: no
 * body), each prefixed with its length so that no two requests share one. Its scratch
 * memory comes from a. */
#define IDEM_FINGERPRINT_LEN (2 * SHA256_LEN)
void idem_fingerprint(arena *a, const char *method, const char *route, const char *param,
                      size_t param_len, json_object *body, char hex[IDEM_FINGERPRINT_LEN + 1]);

#endif
