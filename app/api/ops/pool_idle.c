/* pool_idle: when an idle pool stops (MARKET_IDLE_EXIT, pool_idle.h), a decision kept
 * apart from the signals that carry it out (main.c) so that it is unit tested alone. */
#include "pool_idle.h"

#include <string.h>

#define CHECK_MIN_MS 500
#define CHECK_MAX_MS 5000

pool_idle_verdict pool_idle_decide(long idle_exit_s, long long idle_ms, const char *parent)
{
    if (idle_exit_s <= 0)
        return POOL_IDLE_OFF;
    if (idle_ms < 0 || idle_ms < idle_exit_s * 1000LL)
        return POOL_IDLE_STAY;
    if (parent == NULL || strcmp(parent, POOL_IDLE_PARENT) != 0)
        return POOL_IDLE_NO_POOL;
    return POOL_IDLE_STOP;
}

int pool_idle_check_ms(long idle_exit_s)
{
    if (idle_exit_s <= 0)
        return 0;
    long long quarter = idle_exit_s * 1000LL / 4;
    if (quarter < CHECK_MIN_MS)
        return CHECK_MIN_MS;
    return quarter > CHECK_MAX_MS ? CHECK_MAX_MS : (int)quarter;
}
