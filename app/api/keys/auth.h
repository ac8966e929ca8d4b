/* auth: the API key and the shared rate limit (docs/contract.md section 3). The host's
 * workers keep the keys they saw and take the rate limit's requests from PostgreSQL in
 * blocks (app/api/keys/key_budget.h), so most requests need no statement for their key; the
 * others check it in one round trip, which may carry the catalogue's page too. */
#ifndef MARKET_AUTH_H
#define MARKET_AUTH_H

#include <stdbool.h>

#include "key_budget.h"
#include "request.h"

/* The key check of one request: what the host's memory said, and the statement's
 * parameters when the database must answer. */
typedef struct {
    uint8_t hash[SHA256_LEN];
    char hash_hex[2 * SHA256_LEN + 1];
    db_arg limit, want, host; /* the text of params[1], [3] and [4] */
    const char *params[5];
    uint64_t generation; /* of the host's kept keys, before the statement */
    kb_verdict memory;   /* what the host's memory said; KB_ASK: run auth_statement() */
    kb_answer answer;
} auth_query;

/* The key check in two halves, so that it can share a round trip with a catalogue read:
 * auth_begin checks the header's form (401 without any database work), fills q and sets
 * r->caller.mode from the key's prefix. When q.memory is KB_ASK, auth_statement() run with
 * q.params gives the result that auth_finish reads; otherwise auth_finish is called with
 * a NULL result. auth_finish fills r->caller and the rate headers, or answers 401, 429
 * or 503 (it may run statements of its own: a shared window's budget). */
bool auth_begin(request *r, auth_query *q);
db_stmt *auth_statement(void);
bool auth_finish(request *r, auth_query *q, db_result *res);

/* Listens for what auth_hear reads (before the worker's first connection). */
void auth_init(worker *w);

/* Reads what the worker's database connection brought unasked: a change of api_keys
 * (every kept key row is stale) or a window shared with another host (the host gives
 * back what it holds of it). Called before each key check and while the worker waits
 * for a connection. False when the connection is gone. */
bool auth_hear(worker *w);

/* True when the caller's key grants scope. */
bool auth_has_scope(const request *r, const char *scope);

/* auth_has_scope, or the answer 403 insufficient_scope (which replaces an answer already
 * written, such as a refused input's: the scope is checked before the input). */
bool auth_require_scope(request *r, const char *scope);

/* Deletes rate-limit windows that ended; called now and then by each worker. */
void auth_prune_windows(worker *w);

#endif
