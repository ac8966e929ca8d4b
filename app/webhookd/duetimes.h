/* duetimes: the times at which this drainer's own retries come due (a min-heap), so that
 * it claims a retry when it is due rather than at the next one-second poll. A hint only:
 * another drainer may take the retry first, and what does not fit is found by the poll. */
#ifndef MARKET_WEBHOOKD_DUETIMES_H
#define MARKET_WEBHOOKD_DUETIMES_H

#include <stdbool.h>
#include <stddef.h>

#define DUETIMES_MAX 65536

typedef struct {
    long long *at; /* monotonic milliseconds; at[0] is the earliest */
    size_t len;
    size_t cap;
} duetimes;

void duetimes_init(duetimes *d);
void duetimes_free(duetimes *d);
void duetimes_add(duetimes *d, long long at);

/* The earliest time, or -1 when there is none. */
long long duetimes_next(const duetimes *d);

/* Forgets every time up to now; true when there was one (a claim is due). */
bool duetimes_pop_due(duetimes *d, long long now);

#endif
