/* retry: the retry rule alone, as a pure function, so that the schedule deliveries follow
 * (the configured delays, the jitter, when to give up) is unit tested without a drainer. */
#include "retry.h"

#define JITTER_SPREAD 0.2 /* total width: -10 % .. +10 % */

retry_outcome retry_decide(bool ok, bool final, int attempt, const long *delays, int ndelays,
                           double jitter)
{
    retry_outcome out = {"failed", 0};
    if (ok) {
        out.status = "delivered";
        return out;
    }
    if (final || attempt < 1 || attempt > ndelays)
        return out;
    double factor = 1.0 - JITTER_SPREAD / 2 + JITTER_SPREAD * jitter;
    out.status = "pending";
    out.delay_ms = (long)((double)delays[attempt - 1] * 1000.0 * factor);
    return out;
}
