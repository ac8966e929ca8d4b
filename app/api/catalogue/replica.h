/* replica: where reads that may be a little stale go. A streaming replica while it is
 * reachable and at most max_lag seconds behind the primary, else the primary.
 *
 * The replica's lag is measured, not guessed. About once a second the primary's WAL
 * position is sampled (one short statement on the primary's connection) and the replica
 * is asked how far it has replayed. The replica has everything the primary had at the
 * newest sample it has replayed, so it is at most (now - that sample's time) behind; and
 * it is never further behind than the age of the last transaction it replayed. The lag
 * is the smaller of the two bounds, measured on this process's clock for the first, so
 * the hosts' clocks need not agree for it. A node that is not in recovery (a promoted
 * replica, or the primary itself) is not behind at all.
 *
 * Connecting never waits: the replica is connected to without blocking. A read waits for
 * it at most REPLICA_READ_TIMEOUT_MS (the lag check REPLICA_CHECK_TIMEOUT_MS); a read
 * that fails on it (connection lost, or no answer in time) is answered by the primary,
 * and reads stay there until a new connection's check finds the replica fit again. So a
 * replica cut off from the network costs each worker one wait of at most a second. */
#ifndef MARKET_REPLICA_H
#define MARKET_REPLICA_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"

#define REPLICA_CHECK_MS 1000
#define REPLICA_READ_TIMEOUT_MS 1000 /* catalogue reads take milliseconds */
#define REPLICA_CHECK_TIMEOUT_MS 500 /* the lag check is one tiny statement */
#define REPLICA_SAMPLES 64

typedef struct replica replica;

/* A replica read by this process, checked against primary (which must stay open). */
replica *replica_open(const char *conninfo, const char *application_name, long max_lag_seconds,
                      db *primary);
void replica_close(replica *rp);

/* The connection reads should use now: the replica's, or NULL for the primary. */
db *replica_pick(replica *rp, long long now_ms);

/* A read on the replica's connection failed (the connection was lost or the read took
 * too long): reads go to the primary until the replica is fit again. */
void replica_failed(replica *rp, const char *why);

/* How many times reads moved back to the replica after leaving it (a counter for logs
 * and tests). */
unsigned long replica_returns(const replica *rp);

/* The pure part, exposed for tests. */

/* Parses a pg_lsn's text form "16/B374D848". */
bool lsn_parse(const char *text, uint64_t *out);

/* The primary's WAL position at known times, newest last. */
typedef struct {
    uint64_t lsn[REPLICA_SAMPLES];
    long long at_ms[REPLICA_SAMPLES];
    int count; /* valid samples, at most REPLICA_SAMPLES */
    int next;  /* where the next sample goes */
} lsn_samples;

void lsn_samples_add(lsn_samples *s, uint64_t lsn, long long at_ms);

/* The replica's lag bound in milliseconds, or -1 when nothing bounds it: replayed is the
 * replica's replay position, replay_age_ms the age of its last replayed transaction (-1
 * when it has replayed none). */
long long replica_lag_ms(const lsn_samples *s, uint64_t replayed, long long replay_age_ms,
                         long long now_ms);

#endif
