/* idempotency: the Idempotency-Key header of the POST routes (docs/contract.md section 6).
 *
 * The same key and request from the same API key within 24 hours replays the first
 * response (same status, same body); the same key with another request is 409
 * idempotency_conflict. A request is its method, route, raw path parameter and body
 * (parsed and re-serialised, so whitespace does not matter).
 *
 * Exactly one effect, however many twins race on however many workers: idem_begin opens
 * a transaction and first INSERTs the key's row. A twin's INSERT then waits on the
 * unique index until the first transaction ends; if it committed, the twin reads the
 * stored response and replays it, if it rolled back, the twin proceeds as the first.
 * The handler's effect runs inside that same transaction, and idem_finish stores the
 * response and commits both at once.
 *
 * Use, in a changing route's handler, after its input checks: idem_run(r, effect), where
 * effect answers success or error. idem_run is this sequence, for the rare handler that
 * needs it spelled out:
 *
 *     idem_state st;
 *     if (!idem_begin(r, r->route_label, &st))
 *         return;                     // answered: replay, 409, 400 or 503
 *     if (idem_guard(r, &st))
 *         ...the effect, which answers success or error...
 *     idem_finish(r, &st);            // on every path once idem_begin returned true
 *
 * Responses of status 500 and above are not stored (the transaction rolls back, the
 * effect with it), so a retry after a failure runs again. */
#ifndef MARKET_IDEMPOTENCY_H
#define MARKET_IDEMPOTENCY_H

#include <stdbool.h>

#include "idem_window.h"
#include "idempotency_rules.h"
#include "request.h"

typedef struct {
    bool active; /* a key was given: a transaction is open and this request owns the row */
} idem_state;

/* Without an Idempotency-Key header: st->active = false, returns true, nothing else.
 * With one: validates it (400 idempotency_key_invalid), claims it and returns true, or
 * answers (replay, 409 idempotency_conflict, 503) and returns false. */
bool idem_begin(request *r, const char *route, idem_state *st);

/* Call right before the effect's first statement. False (503 answered) when the
 * transaction of idem_begin was lost with its database connection: a reconnected
 * connection would otherwise run the effect outside it, unrecorded. */
bool idem_guard(request *r, const idem_state *st);

/* Stores the response (status below 500) with the key and commits the effect with it,
 * or rolls both back. A failure to commit replaces the response with 503. */
void idem_finish(request *r, idem_state *st);

/* The effect of a changing route, run at most once per Idempotency-Key: in_transaction
 * says a key was given, so that a transaction is open already (the effect must not open
 * its own). */
typedef void idem_effect(request *r, bool in_transaction);

/* idem_begin, idem_guard, effect, idem_finish, under the route's own label. */
void idem_run(request *r, idem_effect *effect);

#endif
