/* db: the handle and its connection. Opening a session is where a database that vanished
 * from the network must cost seconds, not minutes, and where a failover must be found:
 * this file owns the connection defaults that bound a dead peer, the race between the
 * hosts of a multi-host conninfo, connecting without blocking (a replica), the throttled
 * reconnect and each new session's settings. What runs on the connection is elsewhere
 * (db_statements.c, db_notify.c, db_script.c); what they share is db_internal.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_hosts.h"
#include "db_internal.h"
#include "log.h"
#include "mem.h"

/* Connection defaults, so that a database host that vanishes from the network (cut off,
 * packets dropped, nothing closed) is given up within seconds and, with a multi-host
 * conninfo (host=a,b target_session_attrs=read-write), the next host is tried:
 *  - a connection attempt gives up on a host after CONNECT_TIMEOUT seconds (libpq's
 *    minimum; per host when several are listed);
 *  - TCP_USER_TIMEOUT: data sent (a statement, a SYN) that the peer has not acknowledged
 *    within TCP_USER_TIMEOUT_MS breaks the connection, so a statement sent into a dead
 *    link fails instead of waiting for the kernel's retransmissions (about 15 minutes);
 *  - TCP keepalives find a dead peer of an idle connection (a drainer waiting for
 *    notifications, a statement whose answer was lost) after about KEEPALIVES_IDLE +
 *    KEEPALIVES_COUNT x KEEPALIVES_INTERVAL seconds, bounded by the user timeout too.
 * A live peer acknowledges at once whatever it is doing, so these never cut a slow
 * statement short. Keywords in the user's conninfo override them. */
#define CONNECT_TIMEOUT_S 2
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define TCP_USER_TIMEOUT_MS "3000"
#define KEEPALIVES_IDLE "2"
#define KEEPALIVES_INTERVAL "1"
#define KEEPALIVES_COUNT "3"
/* A connection opened without blocking (db_connect_start) has no libpq timeout: it is
 * given this long per host. A host that does not answer at all fails at the TCP user
 * timeout, so libpq moves on to the next host before this. */
#define CONNECT_POLL_MS 4000

db *db_open(const char *conninfo, const char *application_name)
{
    db *d = xcalloc(1, sizeof *d);
    d->conninfo = xstrdup(conninfo);
    d->application_name = xstrdup(application_name);
    d->last_attempt_ms = -DB_RETRY_MS;
    d->watch_fd = -1;
    /* Racing the hosts keeps libpq's meaning only where any host that takes writes will
     * do; elsewhere (prefer-standby, any) the order of the list is part of the meaning. */
    d->race = db_hosts_parse(conninfo, &d->hosts) && d->hosts.n > 1 && d->hosts.writable_wanted;
    return d;
}

void db_close(db *d)
{
    if (d == NULL)
        return;
    if (d->conn != NULL)
        PQfinish(d->conn);
    free(d->conninfo);
    free(d->application_name);
    for (int i = 0; i < DB_MAX_CHANNELS; i++)
        free(d->channels[i]);
    free(d->session_sql);
    free(d->prepared);
    PQclear(d->prepare_failure);
    PQclear(d->collected);
    free(d);
}

/* Sessions run with client_min_messages = warning, so what arrives here is a warning or
 * the server's last word before it closes the connection (a shutdown): worth one line. */
static void log_notice(void *arg, const char *message)
{
    (void)arg;
    log_info("database: %s", message);
}

/* Starts a connection with our defaults; PQstatus tells whether it failed already. With
 * host, to that one host of the conninfo only. */
static PGconn *connect_with_defaults(db *d, bool wait, const db_host *host)
{
    /* Defaults first: keywords inside the user's conninfo (expanded from dbname) override
     * them, and the host's own address, after it, overrides the conninfo's lists (libpq
     * takes the last value that is not empty, and db_hosts_parse gave up on lists with
     * empty entries). */
    const char *keys[] = {"connect_timeout",
                          "application_name",
                          "tcp_user_timeout",
                          "keepalives",
                          "keepalives_idle",
                          "keepalives_interval",
                          "keepalives_count",
                          "dbname",
                          "host",
                          "hostaddr",
                          "port",
                          NULL};
    const char *values[] = {STRINGIFY(CONNECT_TIMEOUT_S),
                            d->application_name,
                            TCP_USER_TIMEOUT_MS,
                            "1",
                            KEEPALIVES_IDLE,
                            KEEPALIVES_INTERVAL,
                            KEEPALIVES_COUNT,
                            d->conninfo,
                            host != NULL ? host->host : NULL,
                            host != NULL ? host->hostaddr : NULL,
                            host != NULL ? host->port : NULL,
                            NULL};
    return wait ? PQconnectdbParams(keys, values, 1) : PQconnectStartParams(keys, values, 1);
}

/* Sets up a connection that has just opened; false (connection dropped) on failure. */
static bool session_setup(db *d)
{
    /* The common settings (db.h says why); notices must not reach the log either. */
    PQsetNoticeProcessor(d->conn, log_notice, NULL);
    PGresult *res = PQexec(d->conn, DB_SESSION_SETTINGS_SQL);
    bool set_ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (set_ok && d->statement_timeout[0] != '\0') {
        /* A parameter, like every value: set_config is SET with its value bound. */
        const char *values[1] = {d->statement_timeout};
        res = PQexecParams(d->conn,
                           "SELECT set_config('statement_timeout', $1, false),"
                           " set_config('idle_in_transaction_session_timeout', $1, false)",
                           1, NULL, values, NULL, NULL, 0);
        set_ok = PQresultStatus(res) == PGRES_TUPLES_OK;
        PQclear(res);
    }
    if (set_ok && d->session_sql != NULL) {
        res = PQexec(d->conn, d->session_sql);
        set_ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
    }
    if (!set_ok) {
        log_error("database session setup failed: %s", PQerrorMessage(d->conn));
        db_disconnect(d);
        d->down = true;
        return false;
    }
    if (d->channels[0] != NULL && !db_listen_session(d)) {
        db_disconnect(d);
        d->down = true;
        return false;
    }
    d->connected_once = true;
    if (d->down)
        log_info("database connection restored");
    d->down = false;
    if (d->prepared != NULL)
        memset(d->prepared, 0, d->prepared_cap); /* a new session has no statements */
    d->notified = ~0u; /* whatever was notified while we were away is unknown */
    d->connections++;
    return true;
}

/* message on one line in out: line breaks and tabs become single spaces. */
static void fold_line(char *out, size_t outsz, const char *message)
{
    size_t n = 0;
    for (const char *p = message; *p != '\0' && n + 1 < outsz; p++) {
        bool space = *p == '\n' || *p == '\r' || *p == '\t' || *p == ' ';
        if (space && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = space ? ' ' : *p;
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

/* Keeps libpq's message for db_error, folded to one line. */
void db_keep_error(db *d, const char *message)
{
    fold_line(d->last_error, sizeof d->last_error, message);
}

/* One host's attempt in connect_race. */
typedef struct {
    PGconn *conn; /* NULL: failed (or not started) */
    PostgresPollingStatusType state;
    long long retry_ms; /* a failed host: when it may be tried again */
    char error[200];    /* why its last attempt failed, one line */
} race_entry;

static void race_start(db *d, int i, race_entry *e, long long now)
{
    e->conn = connect_with_defaults(d, false, &d->hosts.host[i]);
    e->state = PGRES_POLLING_WRITING; /* libpq's rule after PQconnectStart */
    if (e->conn == NULL || PQstatus(e->conn) == CONNECTION_BAD) {
        fold_line(e->error, sizeof e->error,
                  e->conn != NULL ? PQerrorMessage(e->conn) : "out of memory");
        PQfinish(e->conn);
        e->conn = NULL;
        e->retry_ms = now + DB_RETRY_MS;
    }
}

/* Advances an attempt whose socket is ready; true when it has connected. */
static bool race_advance(race_entry *e, long long now)
{
    e->state = PQconnectPoll(e->conn);
    if (e->state == PGRES_POLLING_OK)
        return true;
    if (e->state == PGRES_POLLING_FAILED) {
        fold_line(e->error, sizeof e->error, PQerrorMessage(e->conn));
        PQfinish(e->conn);
        e->conn = NULL;
        e->retry_ms = now + DB_RETRY_MS;
    }
    return false;
}

/* Why the race was lost: each host's last word, "; " between them. */
static void race_lost(db *d, race_entry *e)
{
    char why[sizeof d->last_error];
    size_t n = 0;
    why[0] = '\0';
    for (int i = 0; i < d->hosts.n && n + 1 < sizeof why; i++) {
        if (e[i].conn != NULL) { /* still waiting at the deadline */
            const char *host = PQhost(e[i].conn), *port = PQport(e[i].conn);
            snprintf(e[i].error, sizeof e[i].error,
                     "connection to server at \"%s\", port %s failed: timeout expired",
                     host != NULL ? host : "", port != NULL ? port : "");
            PQfinish(e[i].conn);
            e[i].conn = NULL;
        }
        int w = snprintf(why + n, sizeof why - n, "%s%s", i > 0 ? "; " : "", e[i].error);
        n += w > 0 ? (size_t)w : 0;
    }
    db_keep_error(d, why);
}

/* Connects to every host of the conninfo at once and keeps the first that takes writes
 * (libpq checks target_session_attrs on each): a host that has vanished from the network
 * holds the others back by nothing. A host that refuses (a standby: read-only; a server
 * still starting) is tried again every DB_RETRY_MS while another is still being waited
 * for, as a standby may be promoted meanwhile. The whole race lasts at most the connect
 * timeout, which libpq would give each host in turn. NULL when it was lost (last_error
 * says why, host by host). */
static PGconn *connect_race(db *d)
{
    int timeout_s =
        d->hosts.connect_timeout_s >= 0 ? d->hosts.connect_timeout_s : CONNECT_TIMEOUT_S;
    long long now = clock_ms();
    long long deadline = timeout_s > 0 ? now + 1000LL * timeout_s : -1;
    race_entry e[DB_HOSTS_MAX] = {0};
    for (int i = 0; i < d->hosts.n; i++)
        race_start(d, i, &e[i], now);
    PGconn *won = NULL;
    while (won == NULL && (deadline < 0 || now < deadline)) {
        struct pollfd fds[DB_HOSTS_MAX];
        int of[DB_HOSTS_MAX], nfds = 0;
        long long wake = deadline;
        for (int i = 0; i < d->hosts.n; i++) {
            if (e[i].conn == NULL)
                continue;
            of[nfds] = i;
            fds[nfds++] =
                (struct pollfd){.fd = PQsocket(e[i].conn),
                                .events = e[i].state == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        }
        if (nfds == 0)
            break; /* every host refused: nothing left to wait for */
        for (int i = 0; i < d->hosts.n; i++)
            if (e[i].conn == NULL && (wake < 0 || e[i].retry_ms < wake))
                wake = e[i].retry_ms;
        int wait_ms = wake < 0 ? -1 : wake > now ? (int)(wake - now) : 0;
        if (poll(fds, (nfds_t)nfds, wait_ms) < 0 && errno != EINTR)
            break;
        now = clock_ms();
        for (int k = 0; k < nfds && won == NULL; k++) {
            race_entry *r = &e[of[k]];
            if (fds[k].revents != 0 && race_advance(r, now)) {
                won = r->conn;
                r->conn = NULL;
            }
        }
        for (int i = 0; i < d->hosts.n && won == NULL; i++)
            if (e[i].conn == NULL && now >= e[i].retry_ms && (deadline < 0 || now < deadline))
                race_start(d, i, &e[i], now);
    }
    if (won == NULL)
        race_lost(d, e);
    for (int i = 0; i < d->hosts.n; i++)
        PQfinish(e[i].conn); /* the losers; PQfinish(NULL) does nothing */
    return won;
}

bool db_connect(db *d)
{
    db_disconnect(d);
    d->last_attempt_ms = clock_ms();
    if (d->race) {
        d->conn = connect_race(d);
    } else {
        d->conn = connect_with_defaults(d, true, NULL);
        if (PQstatus(d->conn) != CONNECTION_OK)
            db_keep_error(d, d->conn != NULL ? PQerrorMessage(d->conn) : "out of memory");
    }
    if (PQstatus(d->conn) != CONNECTION_OK) {
        if (!d->down && !d->fail_fast) /* log the transition, not every retry */
            log_error("database connection failed: %s", d->last_error);
        d->down = true;
        /* The pause before the next try runs from the end of this one: a try that waited
         * out a dead host's connect timeout, at once followed by another, would keep the
         * worker waiting while requests queue behind it, instead of answering them 503. */
        d->last_attempt_ms = clock_ms();
        return false;
    }
    return session_setup(d);
}

void db_disconnect(db *d)
{
    if (d->conn != NULL) {
        const char *message = PQerrorMessage(d->conn);
        if (message != NULL && *message != '\0')
            db_keep_error(d, message);
        PQfinish(d->conn);
    }
    d->conn = NULL;
    d->connecting = false;
    PQclear(d->collected); /* an answer of the session gone */
    d->collected = NULL;
}

void db_connect_start(db *d)
{
    db_disconnect(d);
    d->last_attempt_ms = clock_ms();
    d->conn = connect_with_defaults(d, false, NULL);
    d->connecting = true;
    /* libpq's rule: after PQconnectStart, act as if PQconnectPoll said WRITING. */
    d->poll_state = PGRES_POLLING_WRITING;
    d->connect_deadline_ms = d->last_attempt_ms + CONNECT_POLL_MS;
    d->connect_host[0] = '\0';
}

/* libpq moves on to the next host of a multi-host conninfo by itself when one fails: each
 * host gets its own CONNECT_POLL_MS, as connect_timeout gives each its own in a blocking
 * connect. */
static void connect_deadline_per_host(db *d)
{
    const char *host = PQhost(d->conn), *port = PQport(d->conn);
    char now_trying[sizeof d->connect_host];
    snprintf(now_trying, sizeof now_trying, "%s:%s", host != NULL ? host : "",
             port != NULL ? port : "");
    if (strcmp(now_trying, d->connect_host) == 0)
        return;
    if (d->connect_host[0] != '\0') /* the first host's deadline runs from the start */
        d->connect_deadline_ms = clock_ms() + CONNECT_POLL_MS;
    snprintf(d->connect_host, sizeof d->connect_host, "%s", now_trying);
}

/* True when the socket is ready for what libpq waits for, without waiting. */
static bool socket_ready(PGconn *pg, PostgresPollingStatusType state)
{
    struct pollfd p = {.fd = PQsocket(pg),
                       .events = state == PGRES_POLLING_READING ? POLLIN : POLLOUT};
    return p.fd >= 0 && poll(&p, 1, 0) > 0;
}

db_connect_state db_connect_poll(db *d, char *err, size_t errlen)
{
    if (!d->connecting)
        return d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK ? DB_CONNECT_OK
                                                                     : DB_CONNECT_FAILED;
    while (d->conn != NULL && PQstatus(d->conn) != CONNECTION_BAD &&
           d->poll_state != PGRES_POLLING_OK && socket_ready(d->conn, d->poll_state))
        d->poll_state = PQconnectPoll(d->conn);
    if (d->conn != NULL && PQstatus(d->conn) != CONNECTION_BAD)
        connect_deadline_per_host(d);
    const char *why = NULL;
    if (d->conn == NULL || PQstatus(d->conn) == CONNECTION_BAD ||
        d->poll_state == PGRES_POLLING_FAILED)
        why = d->conn != NULL ? PQerrorMessage(d->conn) : "out of memory";
    else if (d->poll_state != PGRES_POLLING_OK && clock_ms() > d->connect_deadline_ms)
        why = "timeout expired";
    else if (d->poll_state != PGRES_POLLING_OK)
        return DB_CONNECT_PENDING;
    if (why != NULL) {
        snprintf(err, errlen, "%s", why);
        db_disconnect(d);
        d->down = true;
        return DB_CONNECT_FAILED;
    }
    d->connecting = false;
    if (!session_setup(d)) {
        snprintf(err, errlen, "session setup failed");
        return DB_CONNECT_FAILED;
    }
    return DB_CONNECT_OK;
}

bool db_ready(db *d)
{
    if (d->conn != NULL && !d->connecting && PQstatus(d->conn) == CONNECTION_OK)
        return true;
    if (d->fail_fast && d->connected_once)
        return false; /* the session (and whatever it held) is gone: the tool fails */
    if (clock_ms() - d->last_attempt_ms < DB_RETRY_MS)
        return false;
    return db_connect(d);
}

bool db_is_down(db *d)
{
    return d->conn == NULL || PQstatus(d->conn) != CONNECTION_OK;
}

bool db_has_connection(const db *d)
{
    return d->conn != NULL;
}

db_tx_state db_transaction(const db *d)
{
    if (!db_conn_up(d))
        return DB_TX_NONE;
    switch (PQtransactionStatus(d->conn)) {
    case PQTRANS_IDLE:
        return DB_TX_IDLE;
    case PQTRANS_INTRANS:
        return DB_TX_OPEN;
    case PQTRANS_INERROR:
        return DB_TX_FAILED;
    default: /* PQTRANS_ACTIVE, PQTRANS_UNKNOWN */
        return DB_TX_NONE;
    }
}

const char *db_server_param(const db *d, const char *name)
{
    return d->conn != NULL ? PQparameterStatus(d->conn, name) : NULL;
}

unsigned long db_connections(const db *d)
{
    return d->connections;
}

const char *db_error(db *d)
{
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_BAD)
        db_keep_error(d, PQerrorMessage(d->conn));
    return d->last_error[0] != '\0' ? d->last_error : "not connected";
}

void db_set_session(db *d, const char *sql)
{
    free(d->session_sql);
    d->session_sql = xstrdup(sql);
}

void db_copy_session(db *to, const db *from)
{
    memcpy(to->statement_timeout, from->statement_timeout, sizeof to->statement_timeout);
    if (from->session_sql != NULL)
        db_set_session(to, from->session_sql);
}

void db_set_statement_timeout(db *d, long ms)
{
    snprintf(d->statement_timeout, sizeof d->statement_timeout, "%ld", ms);
}

void db_fail_fast(db *d)
{
    d->fail_fast = true;
}