/* auth: the API key and the shared rate limit, checked in one database round trip. */
#ifndef MARKET_AUTH_H
#define MARKET_AUTH_H

#include <stdbool.h>

#include "request.h"

/* Authenticates r->authorization and counts the request against the key's window.
 * On success fills r->caller and the rate fields and returns true; otherwise answers
 * 401, 429 or 503 and returns false. */
bool auth_check(request *r);

/* True when the caller's key grants scope. */
bool auth_has_scope(const request *r, const char *scope);

/* Deletes rate-limit windows that ended; called now and then by each worker. */
void auth_prune_windows(worker *w);

#endif
