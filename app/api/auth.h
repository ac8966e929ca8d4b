/* auth: the API key and the shared rate limit, checked in one database round trip. */
#ifndef MARKET_AUTH_H
#define MARKET_AUTH_H

#include <stdbool.h>

#include "request.h"

/* The key check's statement parameters, made from the Authorization header alone. */
typedef struct {
    char hash_hex[2 * SHA256_LEN + 1];
    char limit[24];
    const char *params[3];
} auth_query;

/* The key check in two halves, so that it can share a round trip with a catalogue read:
 * auth_begin checks the header's form (401 without any database work), fills q and sets
 * r->caller.mode from the key's prefix; auth_statement() run with q.params gives the
 * result that auth_finish reads (filling r->caller and the rate headers, or answering
 * 401 or 429). */
bool auth_begin(request *r, auth_query *q);
db_stmt *auth_statement(void);
bool auth_finish(request *r, PGresult *res);

/* Authenticates r->authorization and counts the request against the key's window.
 * On success fills r->caller and the rate fields and returns true; otherwise answers
 * 401, 429 or 503 and returns false. */
bool auth_check(request *r);

/* True when the caller's key grants scope. */
bool auth_has_scope(const request *r, const char *scope);

/* Deletes rate-limit windows that ended; called now and then by each worker. */
void auth_prune_windows(worker *w);

#endif
