#include "db.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_hosts.h"
#include "log.h"
#include "mem.h"

struct db {
    char *conninfo;
    char *application_name;
    PGconn *conn;
    unsigned char *prepared; /* prepared[stmt->id]: prepared on this connection */
    size_t prepared_cap;
    long long last_attempt_ms;
    bool down;
    char *listen_channel;       /* LISTENed on every new connection, or NULL */
    char *session_sql;          /* the program's own settings for every new session, or NULL */
    char statement_timeout[24]; /* milliseconds as text, "" for the server's default */
    PGresult *prepare_failure;  /* why the last db_prepare failed, for the statement's caller */
    bool notified;              /* a notification arrived, or the connection was renewed */
    int watch_fd;               /* db_watch: whose hang-up cancels the running statement */
    bool watch_fired;           /* it hung up: the statement was cancelled */

    /* A connection being opened without blocking (db_connect_start). */
    bool connecting;
    PostgresPollingStatusType poll_state;
    long long connect_deadline_ms; /* for the host being tried */
    char connect_host[160];        /* that host, "host:port" */

    db_hosts hosts; /* the conninfo's hosts, one by one */
    bool race;      /* connect to all of them at once (connect_race) */

    char last_error[512]; /* why the last connection was dropped, one line */
    bool fail_fast;       /* a tool: no logging, no reconnecting behind its back */
    bool connected_once;
    unsigned long connections; /* sessions set up so far (db_connections) */
};

/* Statement ids, process-wide, so that one statement has one slot in every
 * connection's prepared set. */
static unsigned last_stmt_id;
/* Pipelines of up to this many statements need no allocation (db_pipeline_once). */
#define PIPELINE_FEW 8

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
    free(d->listen_channel);
    free(d->session_sql);
    free(d->prepared);
    PQclear(d->prepare_failure);
    free(d);
}

/* Sessions run with client_min_messages = warning, so what arrives here is a warning or
 * the server's last word before it closes the connection (a shutdown): worth one line. */
static void log_notice(void *arg, const char *message)
{
    (void)arg;
    log_info("database: %s", message);
}

static bool db_listen_now(db *d)
{
    char *ident = PQescapeIdentifier(d->conn, d->listen_channel, strlen(d->listen_channel));
    if (ident == NULL)
        return false;
    char sql[128];
    snprintf(sql, sizeof sql, "LISTEN %s", ident);
    PQfreemem(ident);
    PGresult *res = PQexec(d->conn, sql);
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok)
        log_error("LISTEN %s failed: %s", d->listen_channel, PQerrorMessage(d->conn));
    PQclear(res);
    return ok;
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
    /* Timestamps travel as text in cursors: fix their form for the session. Notices
     * (a search of only stop words, say) are not errors and must not reach the log.
     * Statements here are short and many run at once: no parallel workers, which also
     * keeps a UNION ALL's branches in their written order (the relevance search relies
     * on it to read its second rank only when the first runs out). */
    PQsetNoticeProcessor(d->conn, log_notice, NULL);
    PGresult *res = PQexec(d->conn, "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; "
                                    "SET client_min_messages = warning; "
                                    "SET max_parallel_workers_per_gather = 0");
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
    if (d->listen_channel != NULL && !db_listen_now(d)) {
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
    d->notified = true; /* whatever was notified while we were away is unknown */
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
static void keep_error(db *d, const char *message)
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
    keep_error(d, why);
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

static bool db_connect(db *d)
{
    db_disconnect(d);
    d->last_attempt_ms = clock_ms();
    if (d->race) {
        d->conn = connect_race(d);
    } else {
        d->conn = connect_with_defaults(d, true, NULL);
        if (PQstatus(d->conn) != CONNECTION_OK)
            keep_error(d, d->conn != NULL ? PQerrorMessage(d->conn) : "out of memory");
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
            keep_error(d, message);
        PQfinish(d->conn);
    }
    d->conn = NULL;
    d->connecting = false;
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

PGconn *db_conn(db *d)
{
    return d->conn;
}

unsigned long db_connections(const db *d)
{
    return d->connections;
}

const char *db_sqlstate(const PGresult *res)
{
    const char *s = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return s != NULL ? s : "";
}

const char *db_text(const PGresult *res, int row, int column)
{
    return PQgetvalue(res, row, column);
}

bool db_null(const PGresult *res, int row, int column)
{
    return PQgetisnull(res, row, column);
}

long long db_int(const PGresult *res, int row, int column)
{
    return strtoll(PQgetvalue(res, row, column), NULL, 10);
}

/* SQLSTATE 25006: a write on a session whose node does not take writes, a standby. The
 * session reached one through a conninfo without target_session_attrs=read-write (a DNS
 * name or a virtual address that moved in a failover, a pooler in front of both nodes):
 * it can never write, and a new connection may reach the node that takes writes now. */
static bool read_only_node(const PGresult *res)
{
    return strcmp(db_sqlstate(res), "25006") == 0;
}

/* The session is no good for this db any more: dropped, and the caller sees a lost
 * connection (503, and a reconnect). */
static void drop_read_only(db *d)
{
    if (!d->down && !d->fail_fast)
        log_error("database is read-only now (a standby): reconnecting");
    d->down = true;
    db_disconnect(d);
}

/* A failed result caused by the connection (not by the SQL) marks the db down. */
static PGresult *db_checked(db *d, PGresult *res)
{
    if (PQstatus(d->conn) != CONNECTION_OK) {
        if (!d->down && !d->fail_fast)
            log_error("database connection lost");
        d->down = true;
        PQclear(res);
        return NULL;
    }
    if (read_only_node(res)) {
        PQclear(res);
        drop_read_only(d);
        return NULL;
    }
    return res;
}

static bool db_prepare(db *d, db_stmt *stmt);
static PGresult *take_prepare_failure(db *d);

/* Asks the server to cancel what the connection runs (a new short connection of libpq's). */
static void cancel_statement(db *d)
{
    char err[256];
    PGcancel *cancel = PQgetCancel(d->conn);
    if (cancel == NULL || !PQcancel(cancel, err, sizeof err))
        log_error("could not cancel a statement: %s", cancel == NULL ? "no connection" : err);
    PQfreeCancel(cancel);
}

/* Waits until libpq can hand a result over without blocking. Meanwhile, when the watched
 * descriptor (db_watch) reports that its peer hung up, the statement is cancelled, once:
 * its result is then an error with SQLSTATE 57014. False when the connection failed. */
static bool await_result(db *d)
{
    PGconn *pg = d->conn;
    while (PQisBusy(pg)) {
        bool watching = d->watch_fd >= 0 && !d->watch_fired;
        struct pollfd p[2] = {{.fd = PQsocket(pg), .events = POLLIN},
                              {.fd = d->watch_fd, .events = POLLRDHUP}};
        if (poll(p, watching ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (watching && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            d->watch_fired = true;
            cancel_statement(d);
        }
        if (p[0].revents != 0 && !PQconsumeInput(pg))
            return false;
    }
    return true;
}

/* The statement's result, as PQexecPrepared gives it, but waited for by await_result. */
static PGresult *exec_watched(db *d, db_stmt *stmt, const char *const *params)
{
    PGconn *pg = d->conn;
    if (!PQsendQueryPrepared(pg, stmt->name, stmt->nparams, params, NULL, NULL, 0))
        return PQmakeEmptyPGresult(pg, PGRES_FATAL_ERROR); /* db_checked sees the connection */
    PGresult *kept = NULL, *res;
    while (await_result(d) && (res = PQgetResult(pg)) != NULL) {
        if (kept == NULL)
            kept = res;
        else
            PQclear(res); /* one statement, one result: PQexec too keeps one */
    }
    return kept != NULL ? kept : PQmakeEmptyPGresult(pg, PGRES_FATAL_ERROR);
}

static PGresult *db_exec_once(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_prepare(d, stmt))
        return NULL;
    PGresult *failed = take_prepare_failure(d);
    if (failed != NULL)
        return failed;
    return db_checked(d, exec_watched(d, stmt, params));
}

PGresult *db_exec(db *d, db_stmt *stmt, const char *const *params)
{
    if (!db_ready(d))
        return NULL;
    /* A connection that broke while idle (database restarted, backend terminated) is
     * found by the first statement after it. Nothing ran on it, so reconnect at once and
     * run the statement again rather than fail a request the database could serve. */
    bool idle = PQtransactionStatus(d->conn) == PQTRANS_IDLE;
    PGresult *res = db_exec_once(d, stmt, params);
    if (res == NULL && idle && !d->fail_fast && db_connect(d))
        res = db_exec_once(d, stmt, params);
    return res;
}

/* Runs a transaction command; true when the server answered with the tag expected (a
 * COMMIT of a failed transaction completes, but as ROLLBACK). A failure is kept for
 * db_error; a lost connection is the connection's own error (db_checked logs it). */
static bool tx_command(db *d, const char *sql, const char *tag)
{
    PGresult *res = db_checked(d, PQexec(d->conn, sql));
    if (res == NULL)
        return false;
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), tag) == 0;
    if (!ok) {
        const char *message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        keep_error(d, message != NULL ? message : "the transaction was rolled back");
        if (!d->fail_fast)
            log_error("database: %s failed: %s", sql, d->last_error);
    }
    PQclear(res);
    return ok;
}

bool db_begin(db *d, db_isolation level)
{
    static const char *const begin_sql[] = {
        [DB_READ_COMMITTED] = "BEGIN ISOLATION LEVEL READ COMMITTED",
        [DB_REPEATABLE_READ] = "BEGIN ISOLATION LEVEL REPEATABLE READ",
        [DB_SERIALIZABLE] = "BEGIN ISOLATION LEVEL SERIALIZABLE",
    };
    return db_ready(d) && tx_command(d, begin_sql[level], "BEGIN");
}

/* Commit and rollback act on the current connection only, never connecting: a fresh
 * session holds no transaction of ours. */
static bool conn_up(const db *d)
{
    return d->conn != NULL && !d->connecting && PQstatus(d->conn) == CONNECTION_OK;
}

/* Inside a transaction, failed or not. */
static bool tx_open(const db *d)
{
    PGTransactionStatusType st = PQtransactionStatus(d->conn);
    return st == PQTRANS_INTRANS || st == PQTRANS_INERROR;
}

bool db_commit(db *d)
{
    if (!conn_up(d))
        return false;
    if (!tx_open(d)) {
        keep_error(d, "no transaction in progress");
        if (!d->fail_fast)
            log_error("database: COMMIT failed: %s", d->last_error);
        return false;
    }
    return tx_command(d, "COMMIT", "COMMIT");
}

bool db_rollback(db *d)
{
    if (!conn_up(d))
        return false;
    return !tx_open(d) || tx_command(d, "ROLLBACK", "ROLLBACK");
}

void db_listen(db *d, const char *channel)
{
    free(d->listen_channel);
    d->listen_channel = xstrdup(channel);
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_OK && !db_listen_now(d))
        d->down = true;
    d->notified = true;
}

bool db_notified(db *d)
{
    /* libpq queues the notifications it meets while reading results; the server sends
     * them before the answer to any later statement, so no extra read is needed here. */
    if (d->conn != NULL) {
        PGnotify *n;
        while ((n = PQnotifies(d->conn)) != NULL) {
            d->notified = true;
            PQfreemem(n);
        }
    }
    bool was = d->notified;
    d->notified = false;
    return was;
}

static bool is_prepared(const db *d, const db_stmt *stmt)
{
    return stmt->id != 0 && stmt->id < d->prepared_cap && d->prepared[stmt->id];
}

static void mark_prepared(db *d, db_stmt *stmt)
{
    if (stmt->id >= d->prepared_cap) {
        size_t cap = d->prepared_cap == 0 ? 64 : d->prepared_cap;
        while (cap <= stmt->id)
            cap *= 2;
        unsigned char *grown = xrealloc(d->prepared, cap);
        memset(grown + d->prepared_cap, 0, cap - d->prepared_cap);
        d->prepared = grown;
        d->prepared_cap = cap;
    }
    d->prepared[stmt->id] = 1;
}

/* Prepares stmt on the current connection if it is not yet; false when the connection
 * failed. A statement that does not prepare is a bug in this program's SQL: it is logged,
 * and executing it then fails with an SQL error the caller sees. */
static bool db_prepare(db *d, db_stmt *stmt)
{
    if (stmt->id == 0)
        stmt->id = ++last_stmt_id;
    if (is_prepared(d, stmt))
        return true;
    PGresult *res = db_checked(d, PQprepare(d->conn, stmt->name, stmt->sql, stmt->nparams, NULL));
    if (res == NULL)
        return false;
    if (PQresultStatus(res) == PGRES_COMMAND_OK) {
        mark_prepared(d, stmt);
        PQclear(res);
        return true;
    }
    /* The statement's caller gets this failure as the statement's own result (a prepare
     * cancelled by statement_timeout, say, is then answered like a statement that was). */
    log_error("prepare %s failed: %s", stmt->name, PQresultErrorMessage(res));
    PQclear(d->prepare_failure);
    d->prepare_failure = res;
    return true;
}

/* The failure of the prepare just tried, if it failed (the caller owns it), else NULL. */
static PGresult *take_prepare_failure(db *d)
{
    PGresult *res = d->prepare_failure;
    d->prepare_failure = NULL;
    return res;
}

static void clear_results(int n, PGresult **out)
{
    for (int i = 0; i < n; i++) {
        PQclear(out[i]);
        out[i] = NULL;
    }
}

/* One pipelined round trip; false when the connection failed. sent_index has room for n:
 * the statements sent, by index (a statement whose prepare failed is not sent: its
 * result is that failure). */
static bool db_pipeline_run(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                            PGresult **out, int *sent_index)
{
    int nsent = 0;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!db_prepare(d, stmts[i])) {
            clear_results(n, out);
            return false;
        }
        out[i] = take_prepare_failure(d);
        if (out[i] == NULL)
            sent_index[nsent++] = i;
    }
    PGconn *pg = d->conn;
    if (!PQenterPipelineMode(pg)) {
        log_error("cannot enter pipeline mode: %s", PQerrorMessage(pg));
        return false;
    }
    bool sent = true;
    for (int k = 0; k < nsent && sent; k++) {
        int i = sent_index[k];
        sent =
            PQsendQueryPrepared(pg, stmts[i]->name, stmts[i]->nparams, params[i], NULL, NULL, 0) &&
            PQpipelineSync(pg);
    }
    sent = sent && PQflush(pg) == 0;

    /* Each statement answers with its result, a NULL, then the Sync's own result. */
    int syncs = 0;
    while (sent && syncs < nsent && await_result(d)) {
        PGresult *res = PQgetResult(pg);
        if (res == NULL) {
            if (PQstatus(pg) != CONNECTION_OK)
                break;
            continue;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
            PQclear(res);
            syncs++;
        } else if (out[sent_index[syncs]] == NULL) {
            out[sent_index[syncs]] = res;
        } else {
            PQclear(res); /* a second result for one statement: not ours to keep */
        }
    }
    bool read_only = false;
    for (int i = 0; i < n; i++)
        read_only = read_only || (out[i] != NULL && read_only_node(out[i]));
    if (read_only && syncs == nsent && PQexitPipelineMode(pg)) {
        clear_results(n, out);
        drop_read_only(d);
        return false;
    }
    if (syncs < nsent || !PQexitPipelineMode(pg) || PQstatus(pg) != CONNECTION_OK) {
        clear_results(n, out);
        if (!d->down && !d->fail_fast)
            log_error("database connection lost: %s", PQerrorMessage(pg));
        d->down = true;
        db_disconnect(d);
        return false;
    }
    return true;
}

static bool db_pipeline_once(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                             PGresult **out)
{
    /* A request pipelines two statements: no allocation for so few. */
    int few[PIPELINE_FEW];
    int *sent_index = n <= PIPELINE_FEW ? few : xmalloc((size_t)n * sizeof *sent_index);
    bool ok = db_pipeline_run(d, n, stmts, params, out, sent_index);
    if (sent_index != few)
        free(sent_index);
    return ok;
}

bool db_exec_pipeline(db *d, int n, db_stmt *const *stmts, const char *const *const *params,
                      PGresult **out)
{
    if (!db_ready(d))
        return false;
    /* As in db_exec: a connection that broke while idle is renewed once at once. */
    bool idle = PQtransactionStatus(d->conn) == PQTRANS_IDLE;
    if (db_pipeline_once(d, n, stmts, params, out))
        return true;
    return idle && !d->fail_fast && db_connect(d) && db_pipeline_once(d, n, stmts, params, out);
}

bool db_send(db *d, db_stmt *stmt, const char *const *params)
{
    if (d->conn == NULL || d->connecting || PQstatus(d->conn) != CONNECTION_OK)
        return false;
    if (!db_prepare(d, stmt)) {
        d->down = true;
        db_disconnect(d);
        return false;
    }
    /* A failed prepare is sent anyway: its answer is then an error the caller reads. */
    PQclear(take_prepare_failure(d));
    if (PQsendQueryPrepared(d->conn, stmt->name, stmt->nparams, params, NULL, NULL, 0))
        return true;
    d->down = true;
    db_disconnect(d);
    return false;
}

typedef enum { WAIT_READY, WAIT_TIMEOUT, WAIT_FAILED } wait_outcome;

/* Waits until libpq has a whole result to give, for at most timeout_ms (< 0: no limit). */
static wait_outcome wait_result(PGconn *pg, int timeout_ms)
{
    long long deadline = clock_ms() + timeout_ms;
    while (PQisBusy(pg)) {
        int wait = -1;
        if (timeout_ms >= 0) {
            long long left = deadline - clock_ms();
            if (left <= 0)
                return WAIT_TIMEOUT;
            wait = (int)left;
        }
        struct pollfd p = {.fd = PQsocket(pg), .events = POLLIN};
        if (p.fd < 0 || (poll(&p, 1, wait) < 0 && errno != EINTR) || !PQconsumeInput(pg))
            return WAIT_FAILED;
    }
    return WAIT_READY;
}

PGresult *db_receive(db *d, int timeout_ms)
{
    if (d->conn == NULL)
        return NULL;
    PGresult *kept = NULL, *res = NULL;
    wait_outcome waited;
    while ((waited = wait_result(d->conn, timeout_ms)) == WAIT_READY &&
           (res = PQgetResult(d->conn)) != NULL) {
        if (kept == NULL)
            kept = res;
        else
            PQclear(res);
    }
    if (waited == WAIT_READY && PQstatus(d->conn) == CONNECTION_OK)
        return kept;
    PQclear(kept);
    d->down = true;
    /* A statement that did not answer in time cannot be awaited any longer on this
     * connection: it is dropped, and the server cancels the statement when it notices. */
    db_disconnect(d);
    if (waited == WAIT_TIMEOUT)
        keep_error(d, "no answer in time");
    return NULL;
}

const char *db_error(db *d)
{
    if (d->conn != NULL && PQstatus(d->conn) == CONNECTION_BAD)
        keep_error(d, PQerrorMessage(d->conn));
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

void db_watch(db *d, int fd)
{
    d->watch_fd = fd;
    d->watch_fired = false;
}

bool db_watch_fired(const db *d)
{
    return d->watch_fired;
}

void db_set_statement_timeout(db *d, long ms)
{
    snprintf(d->statement_timeout, sizeof d->statement_timeout, "%ld", ms);
}

int db_socket(db *d)
{
    return d->conn != NULL && !d->connecting ? PQsocket(d->conn) : -1;
}

bool db_consume(db *d)
{
    if (d->conn == NULL || d->connecting)
        return false;
    if (PQconsumeInput(d->conn) && PQstatus(d->conn) == CONNECTION_OK)
        return true;
    if (!d->down && !d->fail_fast)
        log_error("database connection lost: %s", PQerrorMessage(d->conn));
    d->down = true;
    db_disconnect(d);
    return false;
}

void db_fail_fast(db *d)
{
    d->fail_fast = true;
}

PGresult *db_exec_params(db *d, const char *sql, int nparams, const char *const *params)
{
    if (!db_ready(d))
        return NULL;
    return db_checked(d, PQexecParams(d->conn, sql, nparams, NULL, params, NULL, NULL, 0));
}
