/* pool_idle: when an idle pool stops (MARKET_IDLE_EXIT), as php-fpm's ondemand pools do.
 *
 * A pool that has answered no API request for MARKET_IDLE_EXIT seconds, and serves none
 * now, stops whole: its workers close their database connections and exit, and systemd's
 * socket unit starts the pool again at the next connection, which waits in the socket's
 * backlog meanwhile (market-api@.service). Idleness is the pool's, never one worker's:
 * the workers share when each was last active in the metrics file (app/api/ops/metrics.h,
 * metrics_idle_ms), so one worker left idle by nginx's choice of connections never stops
 * a pool whose other workers are busy. /healthz and /metrics are no activity: a monitor
 * that polls them must not keep every site awake.
 *
 * A waiting worker looks every pool_idle_check_ms. The one that finds the pool idle asks
 * the pool's multiwatch to stop (SIGTERM, which multiwatch passes on to every worker,
 * each finishing what it serves: fastcgi_conns.h) and multiwatch then exits with status
 * 0, which the unit does not restart (RestartPreventExitStatus=0). A worker whose parent
 * is not multiwatch (started by hand, or by spawn-fcgi -F) cannot stop its pool: it
 * says so once and stays. This file holds the decisions, without the system; main.c
 * acts on them. */
#ifndef MARKET_API_POOL_IDLE_H
#define MARKET_API_POOL_IDLE_H

#include <stdbool.h>

/* The program a pool's workers have for parent (its /proc/PID/comm). */
#define POOL_IDLE_PARENT "multiwatch"

typedef enum {
    POOL_IDLE_OFF,     /* MARKET_IDLE_EXIT is 0: the pool never stops for idleness */
    POOL_IDLE_STAY,    /* active lately, or serving now */
    POOL_IDLE_STOP,    /* idle long enough: stop the pool */
    POOL_IDLE_NO_POOL, /* idle long enough, but the parent is no multiwatch to stop */
} pool_idle_verdict;

/* idle_exit_s: MARKET_IDLE_EXIT; idle_ms: how long the pool has been idle (-1: a worker
 * serves now; metrics_idle_ms); parent: the name of the worker's parent process (NULL
 * when it cannot be read). */
pool_idle_verdict pool_idle_decide(long idle_exit_s, long long idle_ms, const char *parent);

/* How often a waiting worker looks, in milliseconds: a quarter of MARKET_IDLE_EXIT, from
 * 500 ms to 5 s, so that a pool stops at most that late; 0 when it never stops. */
int pool_idle_check_ms(long idle_exit_s);

#endif
