/* auth_rules: the verdicts of the key check (docs/contract.md sections 2 and 3), apart
 * from what feeds them. auth.c gathers the facts (the Authorization header, the key's row
 * as auth_take read it, the rate budget's answer) and answers what these functions say,
 * so that each rule can be tested without a database and is written in one place. */
#ifndef MARKET_AUTH_RULES_H
#define MARKET_AUTH_RULES_H

#include <stdbool.h>

typedef enum {
    AUTH_ACCEPTED,
    AUTH_MISSING_KEY,        /* no Authorization header, or an empty one */
    AUTH_NOT_BEARER,         /* another scheme */
    AUTH_MALFORMED_KEY,      /* not sk_live_ or sk_test_ and 32..200 of [A-Za-z0-9] */
    AUTH_UNKNOWN_KEY,        /* no row has its hash */
    AUTH_REVOKED,            /* its row was revoked */
    AUTH_EXPIRED,            /* rotated, and the grace (MARKET_KEY_GRACE) has ended */
    AUTH_MODE_MISMATCH,      /* the prefix names another mode than the row's */
    AUTH_TOO_MANY_IN_FLIGHT, /* the key has MARKET_KEY_INFLIGHT requests served here */
    AUTH_RATE_LIMITED,       /* the minute's requests of the key are used up */
} auth_verdict;

/* How a refusal is answered. A 429's message names its numbers: auth.c writes it. */
typedef struct {
    int status; /* 401 or 429 */
    const char *type;
    const char *code;
    const char *message; /* of a 401 */
    bool presented;      /* a 401 to a key that was sent: WWW-Authenticate error="invalid_token" */
} auth_refusal;

/* The answer of a refusal; NULL for AUTH_ACCEPTED. */
const auth_refusal *auth_refusal_of(auth_verdict verdict);

/* The form of the Authorization header, before any database work: AUTH_ACCEPTED with
 * *key pointing at the key inside header, else the refusal. */
auth_verdict auth_header_verdict(const char *header, const char **key);

/* "live" or "test": the mode a well-formed key's prefix names. */
const char *auth_prefix_mode(const char *key);

/* The key's row as the database read it. Whether a rotated key is past its grace is the
 * statement's comparison of expires_at with the database's clock (usable). */
typedef struct {
    bool found;
    bool usable; /* neither revoked nor past expires_at */
    bool revoked;
    const char *mode; /* the row's: "live" or "test" */
} auth_key_row;

/* The verdict on a key's row for a key whose prefix names prefix_mode. */
auth_verdict auth_row_verdict(const auth_key_row *row, const char *prefix_mode);

/* The verdict on a usable key's request: over the key's requests in flight first (that
 * request is not counted, whatever the budget says), then over the minute's limit. */
auth_verdict auth_rate_verdict(bool over_in_flight, bool admitted);

#endif
