/* clock: the programs' time sources in one file, so that what measures a duration is
 * visibly the monotonic clock, and the one wall-clock reading (clock_ms_real) says so in
 * its name. */
#include "clock.h"

#include <time.h>

static struct timespec monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts;
}

long long clock_ms(void)
{
    struct timespec ts = monotonic_now();
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long clock_us(void)
{
    struct timespec ts = monotonic_now();
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

double clock_seconds(void)
{
    struct timespec ts = monotonic_now();
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long clock_ms_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
