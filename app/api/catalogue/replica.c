/* replica: the policy that routes stale-tolerant reads (replica.h). It stays outside the
 * db family (lib/db*.c) on purpose: it decides which of two db handles a read goes to,
 * from a lag it measures with ordinary statements, and never touches a connection itself
 * (connecting without blocking, sending, receiving and reading results all go through
 * lib/db.h), so the database layer stays about one connection and this about a choice. */
#include "replica.h"
#include "db_async.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mem.h"

/* The primary's position: its WAL insert position, or what it has replayed when it is a
 * standby itself (then the replica is compared with what the primary can show). */
DB_STMT(replica_primary_lsn,
        "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
        "             ELSE pg_current_wal_lsn() END)::text",
        0);

/* The replica's side: in recovery at all, how far it has replayed, and the age of the
 * last transaction it replayed in milliseconds (NULL when it has replayed none). */
DB_STMT(replica_replay_state,
        "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,"
        "       (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::bigint",
        0);

typedef enum { REPLICA_DOWN, REPLICA_CONNECTING, REPLICA_UP } replica_state;

struct replica {
    db *db;
    db *primary;
    long long max_lag_ms;
    replica_state state;
    bool fit;        /* reads go to the replica */
    bool ever_fit;   /* for the log: "on the replica" the first time, "back" after */
    bool said_unfit; /* the log last said that reads go to the primary */
    long long next_check_ms;
    unsigned long returns;
    lsn_samples samples;
};

bool lsn_parse(const char *text, uint64_t *out)
{
    unsigned int hi, lo;
    int used = 0;
    /* At most 8 hex digits a half, as PostgreSQL writes them: %X cannot overflow. */
    /* NOLINTNEXTLINE(cert-err34-c) */
    if (text == NULL || sscanf(text, "%8X/%8X%n", &hi, &lo, &used) != 2 || text[used] != '\0')
        return false;
    *out = ((uint64_t)hi << 32) | lo;
    return true;
}

void lsn_samples_add(lsn_samples *s, uint64_t lsn, long long at_ms)
{
    s->lsn[s->next] = lsn;
    s->at_ms[s->next] = at_ms;
    s->next = (s->next + 1) % REPLICA_SAMPLES;
    if (s->count < REPLICA_SAMPLES)
        s->count++;
}

long long replica_lag_ms(const lsn_samples *s, uint64_t replayed, long long replay_age_ms,
                         long long now_ms)
{
    long long lag = replay_age_ms >= 0 ? replay_age_ms : -1;
    /* The newest sample the replica has reached bounds its lag; samples are in time
     * order, so walk back from the newest. */
    for (int i = 1; i <= s->count; i++) {
        int at = (s->next - i + REPLICA_SAMPLES) % REPLICA_SAMPLES;
        if (s->lsn[at] <= replayed) {
            long long bound = now_ms - s->at_ms[at];
            if (bound < 0)
                bound = 0;
            if (lag < 0 || bound < lag)
                lag = bound;
            break;
        }
    }
    return lag;
}

replica *replica_open(const char *conninfo, const char *application_name, long max_lag_seconds,
                      db *primary)
{
    replica *rp = xcalloc(1, sizeof *rp);
    rp->db = db_open(conninfo, application_name);
    db_copy_session(rp->db, primary); /* the same statement timeout and settings */
    rp->primary = primary;
    rp->max_lag_ms = max_lag_seconds * 1000LL;
    rp->state = REPLICA_DOWN;
    return rp;
}

void replica_close(replica *rp)
{
    if (rp == NULL)
        return;
    db_close(rp->db);
    free(rp);
}

unsigned long replica_returns(const replica *rp)
{
    return rp->returns;
}

/* Reads leave the replica; logged once per departure. */
static void set_unfit(replica *rp, const char *why)
{
    if (!rp->said_unfit)
        log_error("catalogue reads: replica unavailable (%s); reading from the primary", why);
    rp->said_unfit = true;
    rp->fit = false;
}

static void set_fit(replica *rp, long long lag_ms)
{
    if (rp->fit)
        return;
    rp->fit = true;
    rp->said_unfit = false;
    if (rp->ever_fit) {
        rp->returns++;
        log_info("catalogue reads: back on the replica (lag %lld ms)", lag_ms);
    } else {
        log_info("catalogue reads: on the replica (lag %lld ms)", lag_ms);
    }
    rp->ever_fit = true;
}

void replica_failed(replica *rp, const char *why)
{
    set_unfit(rp, why);
    if (rp->state == REPLICA_UP && !db_has_connection(rp->db))
        rp->state = REPLICA_DOWN;
}

/* Samples the primary, then asks the replica; sets fit from the lag. */
static void check_lag(replica *rp, long long now_ms)
{
    db_result *p = db_exec(rp->primary, &replica_primary_lsn, NULL);
    uint64_t primary_lsn;
    if (db_ok(p) && db_rows(p) == 1 && lsn_parse(db_text(p, 0, 0), &primary_lsn))
        lsn_samples_add(&rp->samples, primary_lsn, now_ms);
    db_clear(p); /* without a sample (primary down) the older ones still bound the lag */

    db_result *res = db_send(rp->db, &replica_replay_state, NULL)
                         ? db_receive(rp->db, REPLICA_CHECK_TIMEOUT_MS)
                         : NULL;
    if (res == NULL) {
        rp->state = REPLICA_DOWN;
        set_unfit(rp, db_error(rp->db));
        return;
    }
    char why[96];
    long long lag = -1;
    if (!db_ok(res) || db_rows(res) != 1) {
        snprintf(why, sizeof why, "its state could not be read");
    } else if (strcmp(db_text(res, 0, 0), "t") != 0) {
        lag = 0; /* not a standby (promoted): nothing to catch up with */
    } else {
        uint64_t replayed = 0;
        lsn_parse(db_text(res, 0, 1), &replayed);
        long long age = db_null(res, 0, 2) ? -1 : db_int(res, 0, 2);
        lag = replica_lag_ms(&rp->samples, replayed, age, now_ms);
        if (lag < 0)
            snprintf(why, sizeof why, "its lag is unknown");
        else if (lag > rp->max_lag_ms)
            snprintf(why, sizeof why, "%lld ms behind, more than %lld ms", lag, rp->max_lag_ms);
    }
    db_clear(res);
    if (lag >= 0 && lag <= rp->max_lag_ms)
        set_fit(rp, lag);
    else
        set_unfit(rp, why);
}

db *replica_pick(replica *rp, long long now_ms)
{
    if (rp->state == REPLICA_UP && now_ms < rp->next_check_ms)
        return rp->fit ? rp->db : NULL;
    if (rp->state == REPLICA_DOWN) {
        if (now_ms < rp->next_check_ms)
            return NULL;
        db_connect_start(rp->db);
        rp->state = REPLICA_CONNECTING;
    }
    if (rp->state == REPLICA_CONNECTING) {
        char err[256];
        switch (db_connect_poll(rp->db, err, sizeof err)) {
        case DB_CONNECT_PENDING:
            return NULL;
        case DB_CONNECT_FAILED:
            rp->state = REPLICA_DOWN;
            rp->next_check_ms = now_ms + REPLICA_CHECK_MS;
            set_unfit(rp, err);
            return NULL;
        case DB_CONNECT_OK:
            rp->state = REPLICA_UP;
            break;
        }
    }
    rp->next_check_ms = now_ms + REPLICA_CHECK_MS;
    check_lag(rp, now_ms);
    return rp->fit ? rp->db : NULL;
}
