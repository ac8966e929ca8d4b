/* settings: the table of every MARKET_* setting (see settings.h), and what is written from
 * it: each program's --help list, the settings file's blocks and the README's table.
 *
 * The table's order is the settings file's. A description is the paragraph of
 * market.env(5) as the installed file shows it, one "\n" per line, with the Makefile's
 * @NAME@ placeholders for the installed paths. */
#include "settings.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* MARKET_WORKERS's default: one worker per core, as tools/stack and the unit start it. */
static long cores(const market_config *cfg)
{
    (void)cfg;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 && n <= 256 ? n : 1;
}

/* MARKET_KEY_INFLIGHT's default, docs/contract.md section 3: half the host's workers, at
 * least one. MARKET_WORKERS is above it in the table, so config_load has read it. */
static long half_the_workers(const market_config *cfg)
{
    return cfg->workers / 2 > 0 ? cfg->workers / 2 : 1;
}

const setting settings[] = {
    {
        .name = "MARKET_DB",
        .type = SETTING_CONNINFO,
        .fallback = "",
        .readers = SETTING_API | SETTING_WEBHOOKD | SETTING_ADMIN,
        .field = offsetof(market_config, db),
        .help = "the libpq connection string of the database",
        .default_help = "libpq's defaults, the PG* variables",
        .description =
            "The libpq connection string of the database, such as \"host=/run/postgresql\n"
            "dbname=market user=market\" (a local server, peer authentication as the user market)\n"
            "or \"host=db.example.net dbname=market user=market sslmode=verify-full\". With a\n"
            "primary and a standby that fail over (Patroni), name both and let libpq pick the one\n"
            "that takes writes: \"host=10.0.0.11,10.0.0.12 dbname=market user=market\n"
            "target_session_attrs=read-write\" (and, in MARKET_DB_READ,\n"
            "target_session_attrs=prefer-standby). A password belongs in the user's ~/.pgpass or\n"
            "in a service file, not here. Default: libpq's own defaults (the PG* variables).\n",
        .file_value = "host=/run/postgresql dbname=market user=market",
        .set_in_file = true,
    },
    {
        .name = "MARKET_DB_READ",
        .type = SETTING_CONNINFO,
        .readers = SETTING_API,
        .field = offsetof(market_config, db_read),
        .help = "the libpq connection string of a replica, for catalogues",
        .default_help = "none, every read on MARKET_DB",
        .description =
            "The libpq connection string of a streaming replica of the database: the three\n"
            "catalogue routes read there while it is at most MARKET_DB_READ_MAX_LAG behind the\n"
            "primary, and from the primary otherwise. Everything else stays on MARKET_DB.\n"
            "Default: none (every read on MARKET_DB).\n",
    },
    {
        .name = "MARKET_DB_READ_MAX_LAG",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 86400,
        .fallback = "10",
        .readers = SETTING_API,
        .field = offsetof(market_config, db_read_max_lag),
        .help = "seconds the replica may lag before reads leave it",
        .description = "Seconds the replica of MARKET_DB_READ may be behind the primary before "
                       "catalogue reads\n"
                       "go to the primary (1..86400). Default: 10.\n",
    },
    {
        .name = "MARKET_SECRET_FILE",
        .type = SETTING_FILE,
        .required = CONFIG_NEED_SECRET,
        .readers = SETTING_API | SETTING_WEBHOOKD | SETTING_ADMIN,
        .field = offsetof(market_config, secret_file),
        .help = "the file of the server secret (at least 32 bytes)",
        .description =
            "The file holding the server secret (at least 32 bytes; a trailing line feed is not\n"
            "part of it) that keys pagination cursors and download links and encrypts the webhook\n"
            "secrets at rest. The package writes a random one at its first installation, readable\n"
            "by root and the group market only. Changing it invalidates every cursor and link in\n"
            "circulation and every stored webhook secret. Required.\n",
        .file_value = "@SYSCONFDIR@/market/secret",
        .set_in_file = true,
    },
    {
        .name = "MARKET_DOWNLOAD_BASE_URL",
        .type = SETTING_URL,
        .required = CONFIG_NEED_DOWNLOADS,
        .readers = SETTING_API,
        .field = offsetof(market_config, download_base_url),
        .help = "the base of download links: nginx's address and files path",
        .description =
            "The base of minted download links: the public address clients reach nginx at,\n"
            "followed by the files location's path, such as https://api.example.com/files. The\n"
            "workers answer that path; the nginx snippet's files location must have the same one\n"
            "(/files in the packaged snippet). Required.\n",
        .file_value = "http://localhost/files",
        .set_in_file = true,
    },
    {
        .name = "MARKET_FILES_ROOT",
        .type = SETTING_ABSOLUTE_PATH,
        .required = CONFIG_NEED_DOWNLOADS,
        .readers = SETTING_API | SETTING_ADMIN,
        .field = offsetof(market_config, files_root),
        .help = "the folder of the product files, for nginx and seed --files",
        .default_help = "required by market-api",
        .description =
            "The folder of the product files, an absolute path. nginx serves them from its\n"
            "internal location (the packaged snippet aliases @LOCALSTATEDIR@/lib/market/files), "
            "so\n"
            "the user nginx runs as must be able to read them. Required.\n",
        .file_value = "@LOCALSTATEDIR@/lib/market/files",
        .set_in_file = true,
    },
    {
        .name = "MARKET_RATE_LIMIT",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 1000000000,
        .fallback = "600",
        .readers = SETTING_API,
        .field = offsetof(market_config, rate_limit),
        .help = "requests per API key per minute, on every host",
        .description =
            "Requests per API key per minute, counted in the database and so shared by every\n"
            "worker on every host (1..1000000000). Set the same figure in nginx's map\n"
            "$market_rate_limit (@SYSCONFDIR@/nginx/conf.d/market.conf): nginx's own 429, over "
            "its\n"
            "per-address limits, reports it as X-RateLimit-Limit. Default: 600.\n",
    },
    {
        .name = "MARKET_KEY_GRACE",
        .type = SETTING_INTEGER,
        .min = 0,
        .max = 365L * 86400,
        .fallback = "86400",
        .readers = SETTING_ADMIN,
        .field = offsetof(market_config, key_grace),
        .help = "seconds an old key keeps working after key rotate",
        .description =
            "Seconds an old key keeps working after market-admin key rotate (0..31536000).\n"
            "Default: 86400.\n",
    },
    {
        .name = "MARKET_WEBHOOK_SECRET_GRACE",
        .type = SETTING_INTEGER,
        .min = 0,
        .max = 7L * 86400,
        .fallback = "86400",
        .readers = SETTING_API,
        .field = offsetof(market_config, webhook_secret_grace),
        .help = "seconds a rotated-out webhook secret keeps signing",
        .description =
            "Seconds a webhook secret replaced by POST /v1/webhooks/:id/rotate_secret keeps "
            "signing\n"
            "deliveries beside the new one, unless the request sets expire_old_in (0..604800).\n"
            "Default: 86400.\n",
    },
    {
        .name = "MARKET_DOWNLOAD_TTL",
        .type = SETTING_INTEGER,
        .min = 60,
        .max = 86400,
        .fallback = "3600",
        .readers = SETTING_API,
        .field = offsetof(market_config, download_ttl),
        .help = "seconds a minted download link lives by default",
        .description = "The default lifetime of a minted download link, in seconds (60..86400). "
                       "Default: 3600.\n",
    },
    {
        .name = "MARKET_API_EXTENSIONS",
        .type = SETTING_EXTENSIONS,
        .fallback = "",
        .readers = SETTING_API,
        .field = offsetof(market_config, api_extensions),
        .help = "extensions of the API to turn on: webhook-management",
        .default_help = "none, the specification's six routes",
        .description =
            "Extensions of the public interface to turn on, a comma-separated list; unknown names\n"
            "stop the programs at start. By default none: the API is exactly the specification's\n"
            "six routes and four scopes. webhook-management adds the routes that list, read,\n"
            "change, delete, test and re-key webhook subscriptions and read events (GET, POST and\n"
            "DELETE /v1/webhooks/:id, /rotate_secret, /test, GET /v1/webhooks, /v1/events and\n"
            "/v1/events/:id) and the scope webhooks:read that read-write keys then hold. Off, "
            "those\n"
            "paths answer 404 route_not_found like any other. market-admin webhooks works either\n"
            "way. Default: empty.\n",
    },
    {
        .name = "MARKET_PAGE_CACHE_MS",
        .type = SETTING_INTEGER,
        .min = 0,
        .max = 10000,
        .fallback = "1000",
        .readers = SETTING_API,
        .field = offsetof(market_config, page_cache_ms),
        .help = "milliseconds a worker may serve a page again; 0: never",
        .description =
            "How long a worker may answer the same catalogue page again from its memory, in\n"
            "milliseconds (0..10000; 0 turns the cache off). Catalogue writes clear it at once.\n"
            "Default: 1000.\n",
    },
    {
        .name = "MARKET_REQUEST_LOG",
        .type = SETTING_SWITCH,
        .fallback = "1",
        .readers = SETTING_API,
        .field = offsetof(market_config, request_log),
        .help = "1: a log line per API request; 0: nginx's access log only",
        .description =
            "1: market-api writes one line per API request to its standard error (request id,\n"
            "method, route, status, duration, key prefix); 0: it does not, and nginx's access log\n"
            "is the only record of requests (it has the request id, status and time too). The\n"
            "line costs a write(2) per request. Default: 1.\n",
    },
    {
        .name = "MARKET_STATEMENT_TIMEOUT",
        .type = SETTING_INTEGER,
        .min = 10,
        .max = 600000,
        .fallback = "2000",
        .readers = SETTING_API,
        .field = offsetof(market_config, statement_timeout_ms),
        .help = "milliseconds a statement of the API may run, then 503",
        .description =
            "Milliseconds one statement of market-api may run before PostgreSQL cancels it\n"
            "(statement_timeout; also idle_in_transaction_session_timeout), so that no request "
            "can\n"
            "hold a worker and a backend for long. A cancelled statement answers 503\n"
            "service_unavailable with Retry-After: 1, and the worker logs one line naming the\n"
            "statement (10..600000). Default: 2000.\n",
    },
    {
        .name = "MARKET_WORKERS",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 256,
        .computed_default = cores,
        .readers = SETTING_API | SETTING_SERVICE,
        .field = offsetof(market_config, workers),
        .help = "the pool's workers, read by market-api.service too",
        .default_help = "the number of cores",
        .description =
            "The number of market-api workers of the pool, read by market-api.service (1..256),\n"
            "and by market-api for the default of MARKET_KEY_INFLIGHT. With PostgreSQL on the\n"
            "same host one worker per core keeps every core busy; with a remote database add\n"
            "workers to cover the round trip. Default: the number of cores.\n",
        .file_value = "4",
    },
    {
        .name = "MARKET_IDLE_EXIT",
        .type = SETTING_INTEGER,
        .min = 0,
        .max = 86400,
        .fallback = "0",
        .readers = SETTING_API,
        .field = offsetof(market_config, idle_exit),
        .help = "seconds without a request before the pool stops; 0: never",
        .description =
            "Seconds without an API request after which the pool stops (0..86400; 0: never): its\n"
            "workers close their database connections and exit, and market-api.socket starts the\n"
            "pool again at the next connection, which waits meanwhile (the first answer then "
            "takes\n"
            "the pool's start, about a tenth of a second). Idleness is the whole pool's: one "
            "worker\n"
            "idle while another serves stops nothing, nor does a request in progress. /healthz "
            "and\n"
            "/metrics are no activity: a monitor that polls them does not keep the pool from\n"
            "stopping, but a stopped pool starts again to answer them, as any request, so poll an\n"
            "idle site less often than this (the counters of /metrics go on across stops). Under\n"
            "10 s is for tests: market-api.service makes a start within 10 s of the previous one\n"
            "wait 1 s. Only a pool under multiwatch stops. Default: 0 (the default site keeps its\n"
            "pool; a site made by market-admin site create gets 600, or its --idle-exit).\n",
    },
    {
        .name = "MARKET_KEY_INFLIGHT",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 256,
        .computed_default = half_the_workers,
        .readers = SETTING_API,
        .field = offsetof(market_config, key_inflight),
        .help = "one key's requests served at once, then 429",
        .default_help = "half of MARKET_WORKERS, at least 1",
        .description =
            "How many requests of one API key the pool serves at once (1..256), so that one key\n"
            "can never hold every worker of a host. One more is answered at once with 429\n"
            "too_many_in_flight and Retry-After: 1, and is not counted against the minute.\n"
            "Default: half of MARKET_WORKERS, at least 1.\n",
        .file_value = "2",
    },
    {
        .name = "MARKET_METRICS_FILE",
        .type = SETTING_ABSOLUTE_PATH,
        .fallback = CONFIG_METRICS_FILE_DEFAULT,
        .readers = SETTING_API,
        .field = offsetof(market_config, metrics_file),
        .help = "the file a pool's workers share their /metrics counters in",
        .description =
            "The file the workers of one pool share their counters in, for /metrics: an absolute\n"
            "path in a directory the workers may write, one file per pool. Default:\n"
            "@RUNSTATEDIR@/market-api/metrics (market-api.service's runtime directory).\n",
        .file_value = "@RUNSTATEDIR@/market-api/metrics",
    },
    {
        .name = "MARKET_WEBHOOK_TIMEOUT",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 300,
        .fallback = "10",
        .readers = SETTING_WEBHOOKD,
        .field = offsetof(market_config, webhook_timeout),
        .help = "seconds one delivery attempt may take, DNS included",
        .description =
            "Seconds one webhook delivery attempt may take (1..300), resolving the receiver's "
            "host\n"
            "name included: a name with no answer by then fails the attempt, which is retried.\n"
            "Default: 10.\n",
    },
    {
        .name = "MARKET_WEBHOOK_RETRIES",
        .type = SETTING_DURATIONS,
        .fallback = "5s,5m,30m,2h,5h,10h,10h",
        .readers = SETTING_WEBHOOKD,
        .field = offsetof(market_config, webhook_retries),
        .count_field = offsetof(market_config, webhook_retry_count),
        .help = "the delays between delivery attempts, such as 5s,5m,2h",
        .description =
            "The delays between delivery attempts, a comma list of durations in s, m, h or d "
            "(each\n"
            "at most 366 days, at most 32 of them); after the last one a delivery is marked\n"
            "failed. Default: 5s,5m,30m,2h,5h,10h,10h.\n",
    },
    {
        .name = "MARKET_WEBHOOK_CA_FILE",
        .type = SETTING_FILE,
        .readers = SETTING_WEBHOOKD,
        .field = offsetof(market_config, webhook_ca_file),
        .help = "a PEM bundle of extra CAs trusted for deliveries",
        .default_help = "none",
        .description =
            "A PEM bundle of extra certificate authorities trusted for deliveries, besides the\n"
            "system's store (for receivers with a private CA). Default: none.\n",
    },
    {
        .name = "MARKET_WEBHOOK_ALLOW_PRIVATE",
        .type = SETTING_SWITCH,
        .fallback = "0",
        .readers = SETTING_API | SETTING_WEBHOOKD,
        .field = offsetof(market_config, webhook_allow_private),
        .help = "1 allows receivers on loopback and private addresses",
        .description =
            "1 allows webhook receivers on loopback and private addresses (tests, private\n"
            "installations); 0 refuses them, so that a subscription cannot reach the hosting\n"
            "network. Default: 0.\n",
    },
    {
        .name = "MARKET_WEBHOOKD_CONCURRENCY",
        .type = SETTING_INTEGER,
        .min = 1,
        .max = 1024,
        .fallback = "64",
        .readers = SETTING_WEBHOOKD,
        .field = offsetof(market_config, webhookd_concurrency),
        .help = "deliveries one market-webhookd keeps in flight",
        .description =
            "Deliveries one market-webhookd keeps in flight at once (1..1024). Default: 64.\n",
    },
    {
        .name = "MARKET_RETENTION",
        .type = SETTING_DURATION,
        .fallback = "30d",
        .readers = SETTING_WEBHOOKD,
        .field = offsetof(market_config, retention),
        .help = "how long finished events, dead links and keys are kept",
        .description =
            "How long market-webhookd keeps what only grows once it is finished: events whose\n"
            "deliveries are all delivered or failed for good (with their deliveries and attempts,\n"
            "counted from their last attempt), download links after they expired, and API keys\n"
            "after they expired (rotation) or were revoked. One duration in s, m, h or d, at most\n"
            "366d. Pending deliveries are never pruned, nor are orders, payouts, reviews or the\n"
            "catalogue; Idempotency-Key records go after their 24 hours whatever this says.\n"
            "Default: 30d.\n",
    },
    {
        .name = "MARKET_MIGRATIONS_DIR",
        .type = SETTING_FILE,
        .readers = SETTING_ADMIN,
        .field = offsetof(market_config, migrations_dir),
        .help = "the folder of the migrations, for migrate",
        .default_help = "../share/market/sql beside market-admin",
        .description = "The folder of the schema's migrations, for market-admin migrate (and so\n"
                       "market-migrate.service). Default: ../share/market/sql beside the "
                       "market-admin binary,\n"
                       "which is @DATADIR@/market/sql for this installation.\n",
        .file_value = "@DATADIR@/market/sql",
    },
    {
        .name = "MARKET_PROGRESS_SECONDS",
        .type = SETTING_SECONDS,
        .min = 0,
        .max = 3600,
        .fallback = "5",
        .readers = SETTING_ADMIN,
        .field = offsetof(market_config, progress_seconds),
        .help = "seconds between progress lines in a log; 0: none",
        .description =
            "For market-admin seed and import when standard error is not a terminal (a log, a\n"
            "systemd unit): seconds between progress lines, from 0 (none) to 3600. On a terminal "
            "the\n"
            "line is redrawn in place instead. Default: 5.\n",
    },
};

const size_t settings_count = sizeof settings / sizeof settings[0];

const setting *settings_find(const char *name)
{
    for (size_t i = 0; i < settings_count; i++)
        if (strcmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

const char *settings_getenv(const setting *s)
{
    const char *v = getenv(s->name);
    return v != NULL && *v != '\0' ? v : NULL;
}

static bool has_range(const setting *s)
{
    return s->type == SETTING_INTEGER || s->type == SETTING_SECONDS;
}

/* The default in words, or NULL when the default is the value s->fallback. */
static const char *default_in_words(const setting *s)
{
    if (s->default_help != NULL)
        return s->default_help;
    if (s->required != 0)
        return "required";
    if (s->fallback == NULL || *s->fallback == '\0')
        return "none";
    return NULL;
}

void settings_write_help(FILE *out, unsigned readers)
{
    for (size_t i = 0; i < settings_count; i++) {
        const setting *s = &settings[i];
        if ((s->readers & readers) == 0)
            continue;
        /* help2man makes a tagged paragraph of a line indented by 20 under the name. */
        fprintf(out, "  %s\n%20s%s\n%20s(", s->name, "", s->help, "");
        if (has_range(s))
            fprintf(out, "%ld..%ld; ", s->min, s->max);
        const char *words = default_in_words(s);
        if (words != NULL && strncmp(words, "required", 8) == 0)
            fprintf(out, "%s)\n", words);
        else
            fprintf(out, "default: %s)\n", words != NULL ? words : s->fallback);
    }
}

/* The value of a "NAME=value" line: in double quotes when it has a space, as sh and
 * systemd's EnvironmentFile= both read it. */
static void write_file_line(FILE *out, const setting *s)
{
    const char *value = s->file_value != NULL ? s->file_value : s->fallback;
    if (value == NULL)
        value = "";
    const char *quote = strchr(value, ' ') != NULL ? "\"" : "";
    fprintf(out, "%s%s=%s%s%s\n", s->set_in_file ? "" : "#", s->name, quote, value, quote);
}

void settings_write_env(FILE *out)
{
    for (size_t i = 0; i < settings_count; i++) {
        const setting *s = &settings[i];
        fprintf(out, "%s## %s\n", i > 0 ? "\n" : "", s->name);
        for (const char *line = s->description; *line != '\0';) {
            size_t len = strcspn(line, "\n");
            fprintf(out, "## %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
        write_file_line(out, s);
    }
}

static void write_readers(FILE *out, unsigned readers)
{
    static const struct {
        unsigned bit;
        const char *name;
    } programs[] = {
        {SETTING_API, "`market-api`"},
        {SETTING_WEBHOOKD, "`market-webhookd`"},
        {SETTING_ADMIN, "`market-admin`"},
        {SETTING_SERVICE, "`market-api.service`"},
    };
    const char *sep = "";
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        if (readers & programs[i].bit) {
            fprintf(out, "%s%s", sep, programs[i].name);
            sep = ", ";
        }
    }
}

void settings_write_markdown(FILE *out)
{
    fprintf(out, "| variable | meaning | default | read by |\n|---|---|---|---|\n");
    for (size_t i = 0; i < settings_count; i++) {
        const setting *s = &settings[i];
        fprintf(out, "| `%s` | %s", s->name, s->help);
        if (has_range(s))
            fprintf(out, " (%ld..%ld)", s->min, s->max);
        const char *words = default_in_words(s);
        if (words != NULL)
            fprintf(out, " | %s | ", words);
        else
            fprintf(out, " | `%s` | ", s->fallback);
        write_readers(out, s->readers);
        fprintf(out, " |\n");
    }
}
