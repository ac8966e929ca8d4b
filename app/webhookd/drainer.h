/* drainer: the loop of market-webhookd.
 *
 * One thread does everything, driven by one wait on four kinds of event: libcurl's
 * sockets, c-ares' sockets and timers (the receivers' names, lib/resolver.h), the database
 * socket (NOTIFY market_webhooks, sent by the outbox triggers at commit) and the signal
 * pipe; with a one-second timeout as the polling fallback that also finds retries that
 * came due and leases that ran out. Nothing in the loop waits for the network but that
 * one wait, so a receiver slow to resolve, connect or answer delays only itself. The
 * retention pass runs in the same loop on a connection of its own, waited on with the
 * rest. */
#ifndef MARKET_WEBHOOKD_DRAINER_H
#define MARKET_WEBHOOKD_DRAINER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "resolver.h"
#include "retention.h"
#include "sender.h"
#include "store.h"

/* A claimed delivery is this drainer's alone for DRAINER_LEASE_SECONDS, extended every
 * DRAINER_RENEW_MS while it holds it: a drainer that dies (or loses its host) hands its
 * deliveries back within the lease, and others resend them at their next poll. */
#define DRAINER_LEASE_SECONDS 10
#define DRAINER_RENEW_MS 3000

typedef struct {
    const market_config *cfg;
    const uint8_t *secret_key; /* 32 bytes: opens the sealed subscription secrets */
    store *outbox;             /* the deliveries in PostgreSQL (store.h) */
    sender *http;
    resolver *dns; /* its deadline: the attempt's timeout (MARKET_WEBHOOK_TIMEOUT) */
    int concurrency;
    int signal_fd;        /* readable when SIGTERM or SIGINT arrived */
    retention *retention; /* the pruning pass, stepped by the loop (retention.h) */
} drainer_setup;

/* Runs until a signal asks it to stop, then lets the attempts under way finish (each,
 * lookup and request together, is bounded by the timeout), records them and returns. */
void drainer_run(const drainer_setup *setup);

#endif
