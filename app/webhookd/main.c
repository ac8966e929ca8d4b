/* market-webhookd: drains the webhook outbox (see drainer.h for the loop, store.h for
 * the database side, sender.h for HTTP).
 *
 * Configuration: the MARKET_* settings of lib/settings.c that name market-webhookd
 * (MARKET_SECRET_FILE is required, it opens the subscription secrets), read by
 * config_load. Stops on SIGTERM or SIGINT after the requests in flight have finished and
 * been recorded, with exit status 0. Runs the retention pass too (retention.h), in the
 * same loop. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cabundle.h"
#include "cli.h"
#include "config.h"
#include "crypto.h"
#include "drainer.h"
#include "log.h"
#include "prune_pass.h"

#define SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

static int signal_pipe[2] = {-1, -1};

/* Async-signal-safe: the loop sees the byte on its next wait. */
static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    if (write(signal_pipe[1], "s", 1) < 0) {
        /* The pipe is full: a stop is already pending. */
    }
    errno = saved;
}

static bool setup_signals(void)
{
    if (pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
        return false;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    signal(SIGPIPE, SIG_IGN); /* a receiver closing its socket is an error, not a death */
    return sigaction(SIGTERM, &sa, NULL) == 0 && sigaction(SIGINT, &sa, NULL) == 0;
}

/* The name of this process in leased_by: host, pid and a random tag, so that a restarted
 * drainer with a recycled pid does not take over its predecessor's leases. */
static void drainer_name(char *out, size_t outsz)
{
    char host[128] = "unknown";
    gethostname(host, sizeof host - 1);
    char tag[9];
    crypto_random_alnum(tag, 8);
    snprintf(out, outsz, "%s:%ld:%s", host, (long)getpid(), tag);
}

/* The combined CA file when MARKET_WEBHOOK_CA_FILE is set (see cabundle.h). */
static bool load_ca(const market_config *cfg, cabundle *bundle, char *err, size_t errlen)
{
    memset(bundle, 0, sizeof *bundle);
    bundle->fd = -1;
    if (cfg->webhook_ca_file == NULL)
        return true;
    const char *system = SYSTEM_CA_BUNDLE;
    CURL *probe = curl_easy_init();
    char *builtin = NULL;
    /* The bundle libcurl was built to use, where it says. */
    if (probe != NULL && curl_easy_getinfo(probe, CURLINFO_CAINFO, &builtin) == CURLE_OK &&
        builtin != NULL)
        system = builtin;
    buf pem;
    buf_init(&pem, (size_t)256 * 1024); /* the system bundle is about 200 KiB */
    bool ok = cabundle_build(system, cfg->webhook_ca_file, &pem, err, errlen) &&
              cabundle_open(bundle, &pem, err, errlen);
    buf_free(&pem);
    curl_easy_cleanup(probe);
    return ok;
}

/* What --help says (lib/cli.h adds the usage line and the options); help2man makes
 * the man page from it (Makefile, target man). */
static const char help_description[] =
    "The webhook drainer of market: it delivers the outbox (webhook_deliveries, filled by\n"
    "the database's triggers at commit) to the sellers' HTTPS receivers, signed, with many\n"
    "requests in flight at once, and records every attempt. A failed attempt is retried\n"
    "after the delays of MARKET_WEBHOOK_RETRIES, then the delivery is marked failed.\n"
    "Any number of drainers may run, on any hosts: each claims deliveries under a lease,\n"
    "so none is sent twice in normal operation and one killed at any instant loses\n"
    "nothing (its lease runs out and another drainer retries). It wakes on the\n"
    "database's notifications, with a one-second poll as the fallback.\n"
    "\n"
    "Receivers' host names are resolved at every attempt with c-ares (/etc/resolv.conf,\n"
    "read again whenever it changes, and /etc/hosts) inside the same event loop, so a\n"
    "slow DNS answer delays only the deliveries to that name; a lookup may take the\n"
    "attempt's time (MARKET_WEBHOOK_TIMEOUT), after which the attempt fails and is\n"
    "retried.\n"
    "It also prunes what only grows once its period is over: finished events with their\n"
    "deliveries and attempts, expired download links and dead API keys after\n"
    "MARKET_RETENTION, Idempotency-Key records after 24 hours; in batches of at most\n"
    "1,000 rows, on a connection of its own, one drainer at a time (an advisory lock).\n"
    "\n"
    "SIGTERM or SIGINT stops it once the requests in flight have finished and been\n"
    "recorded, with exit status 0. It logs one line per event on standard error, and one\n"
    "per retention pass with what it pruned.\n";
static const char help_environment[] =
    "Each setting is described in market.env(5); MARKET_SECRET_FILE opens the\n"
    "subscriptions' secrets. A missing or invalid setting stops it at start with one line\n"
    "on standard error, exit status 1.\n";

int main(int argc, char **argv)
{
    log_set_program("market-webhookd");
    static const cli_daemon self = {"market-webhookd", MARKET_VERSION, help_description,
                                    SETTING_WEBHOOKD, help_environment};
    int cli = cli_daemon_args(argc, argv, &self, stdout, stderr);
    if (cli >= 0)
        return cli;
    market_config cfg;
    char err[256];
    cabundle ca;
    if (!crypto_init() || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "market-webhookd: cannot initialise libgcrypt or libcurl\n");
        return 1;
    }
    if (!config_load(&cfg, CONFIG_NEED_SECRET, err, sizeof err) ||
        !load_ca(&cfg, &ca, err, sizeof err)) {
        fprintf(stderr, "market-webhookd: %s\n", err);
        return 1;
    }
    if (!setup_signals()) {
        fprintf(stderr, "market-webhookd: cannot install signal handlers\n");
        return 1;
    }
    uint8_t secret_key[SHA256_LEN];
    crypto_derive(cfg.secret, cfg.secret_len, "market webhook secret v1", secret_key);
    char name[200];
    drainer_name(name, sizeof name);

    /* A lookup may take the attempt's whole time (the request then has none left). */
    resolver *dns =
        resolver_create(cfg.webhook_timeout * 1000, RESOLVER_CONF, NULL, err, sizeof err);
    if (dns == NULL) {
        fprintf(stderr, "market-webhookd: %s\n", err);
        return 1;
    }
    int concurrency = (int)cfg.webhookd_concurrency; /* 1..1024: lib/settings.c */
    char servers[256];
    resolver_servers(dns, servers, sizeof servers);
    store *outbox = store_open(cfg.db, name, DRAINER_LEASE_SECONDS);
    sender *http = sender_create(concurrency, cfg.webhook_ca_file ? ca.path : NULL);
    char kept[24];
    prune_format_duration(cfg.retention, kept, sizeof kept);
    log_info("started as %s: %d in flight at most, timeout %lds, %d retries, retention %s%s; "
             "DNS servers %s",
             name, concurrency, cfg.webhook_timeout, cfg.webhook_retry_count, kept,
             cfg.webhook_allow_private ? ", private receivers allowed" : "", servers);
    retention *pruning = retention_open(cfg.db, cfg.retention);
    drainer_setup setup = {&cfg, secret_key,  outbox,         http,
                           dns,  concurrency, signal_pipe[0], pruning};
    drainer_run(&setup);

    retention_close(pruning);
    sender_destroy(http);
    resolver_destroy(dns);
    store_close(outbox);
    explicit_bzero(secret_key, sizeof secret_key);
    cabundle_close(&ca);
    curl_global_cleanup();
    log_info("stopped");
    return 0;
}
