/* clock: the one monotonic clock of the programs, for timeouts, deadlines, rates and
 * durations (never for times shown to people: those are the database's or the wall
 * clock's). CLOCK_MONOTONIC does not jump when the system time is set. */
#ifndef MARKET_CLOCK_H
#define MARKET_CLOCK_H

/* Milliseconds, microseconds and seconds since an arbitrary fixed point. */
long long clock_ms(void);
long long clock_us(void);
double clock_seconds(void);

/* Milliseconds since the Unix epoch, from the wall clock: only for what is defined on
 * it, such as the rate limit's windows aligned to the Unix minute. */
long long clock_ms_real(void);

#endif
