/* retry: what happens to a delivery after an attempt (a pure function of the attempt
 * number and the configured delays, so it can be reasoned about and tested alone). */
#ifndef MARKET_WEBHOOKD_RETRY_H
#define MARKET_WEBHOOKD_RETRY_H

#include <stdbool.h>

typedef struct {
    const char *status; /* "delivered", "pending" (retry later) or "failed" */
    long delay_ms;      /* for "pending": from now until the next attempt */
} retry_outcome;

/* attempt is the 1-based number of the attempt just made; delays[k-1] (seconds) is the
 * wait after failed attempt k, so there are ndelays + 1 attempts in all. jitter is a
 * uniform number in [0, 1) that spreads the delay by +-10 %, so that deliveries that
 * failed together (a receiver down) do not all come back in the same second. */
retry_outcome retry_decide(bool ok, bool final, int attempt, const long *delays, int ndelays,
                           double jitter);

#endif
