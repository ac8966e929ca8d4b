/* store: market-webhookd's side of PostgreSQL: LISTEN for wake-ups, claim due deliveries
 * under a lease, renew the leases, record each attempt's outcome.
 *
 * It runs on lib/db's connection like the other programs (prepared statements, reconnect,
 * one-line notices); its own are the SQL below, the session settings (no synchronous
 * commit, a statement timeout) and the LISTEN that lib/db renews on every new connection.
 * The drainer waits on the connection's socket together with libcurl's. A lost
 * connection is retried at most every DB_RETRY_MS; meanwhile the drainer keeps sending
 * what it already holds. */
#ifndef MARKET_WEBHOOKD_STORE_H
#define MARKET_WEBHOOKD_STORE_H

#include <stdbool.h>

#include "delivery.h"

typedef struct store store;

/* name: this drainer's name in leased_by; lease_seconds: how long a claim is exclusive. */
store *store_open(const char *conninfo, const char *name, long lease_seconds);
void store_close(store *s);

/* Connects if needed (throttled); true when the connection is usable. */
bool store_ready(store *s);

/* The socket to wait on for notifications, or -1 while disconnected. */
int store_socket(store *s);

/* Reads what arrived on the socket; true when at least one NOTIFY market_webhooks came
 * (also those that arrived during earlier queries). */
bool store_notified(store *s);

/* Claims up to max due deliveries (oldest due first) into out; returns how many, or -1
 * when the database is unreachable. */
int store_claim(store *s, int max, delivery *out);

typedef enum {
    STORE_SEND_GO,       /* still pending, subscription enabled: send it now */
    STORE_SEND_DISABLED, /* the subscription is disabled: fail the attempt, unsent */
    STORE_SEND_DELETED,  /* the subscription is deleted: ended as endpoint_deleted, unsent */
    STORE_SEND_ENDED,    /* no longer pending or no longer ours: nothing to send or record */
    STORE_SEND_DOWN      /* the database is unreachable: send nothing, the lease runs out */
} store_send;

/* The last word before an attempt is sent: whether it may be, decided under the
 * delivery's row lock (see begin_send in store.c). A send that got STORE_SEND_GO began
 * before any DELETE or disable of its subscription that has not committed yet. */
store_send store_begin_send(store *s, long long delivery_id);

/* Extends every lease this process holds by lease_seconds from now; false when the
 * database is unreachable (the leases then run out and other drainers resend). */
bool store_renew(store *s);

typedef enum {
    STORE_RECORDED,
    STORE_DOWN,    /* not recorded: try again later (recording is idempotent) */
    STORE_REJECTED /* an SQL error (the delivery was deleted meanwhile): nothing to keep */
} store_record_result;

typedef struct {
    const delivery *d;
    const attempt *a;
    const char *status; /* "delivered", "pending" (retry after retry_ms) or "failed" */
    long retry_ms;
    store_record_result result; /* set by store_record_all */
} store_outcome;

/* Records each attempt and sets its delivery's new status, releasing the lease. Each
 * outcome is its own statement and its own short transaction; they are sent in one
 * pipeline, so that n outcomes cost one round trip to the database rather than n.
 * Recording the same outcome twice (after a connection lost mid-way) changes nothing. */
void store_record_all(store *s, store_outcome *outcomes, int n);

#endif
