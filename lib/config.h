/* config: the MARKET_* environment, read and checked once at start.
 *
 * Every setting is declared in the table of lib/settings.c (type, range, default, when it
 * is required); config_load walks that table. A missing or invalid setting is reported as
 * one line and the program stops: it is better not to start than to serve with a
 * half-understood configuration. */
#ifndef MARKET_CONFIG_H
#define MARKET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_RETRIES 32
/* The packaged pool's runtime directory (market-api.service: RuntimeDirectory=market-api). */
#define CONFIG_METRICS_FILE_DEFAULT "/run/market-api/metrics"
#define CONFIG_SECRET_MAX 4096

enum {
    CONFIG_NEED_SECRET = 1 << 0,    /* MARKET_SECRET_FILE */
    CONFIG_NEED_DOWNLOADS = 1 << 1, /* MARKET_DOWNLOAD_BASE_URL, MARKET_FILES_ROOT */
};

/* The extensions of the public interface an operator may turn on (MARKET_API_EXTENSIONS,
 * docs/contract.md section 13); none is on by default: the specification's six routes. */
enum {
    CONFIG_EXT_WEBHOOK_MANAGEMENT = 1 << 0, /* "webhook-management": section 13's routes */
};
/* Their names, for the messages that refuse another. */
#define CONFIG_EXTENSIONS_KNOWN "webhook-management"

/* One field per setting (lib/settings.c says which); a text setting without a value and
 * without a default is NULL. */
typedef struct {
    const char *db;       /* libpq conninfo; "" means libpq's defaults */
    const char *db_read;  /* conninfo of a read replica for catalogue reads, or NULL */
    long db_read_max_lag; /* seconds a replica may be behind before reads leave it */
    const char *secret_file;
    uint8_t secret[CONFIG_SECRET_MAX]; /* the file's content, when CONFIG_NEED_SECRET */
    size_t secret_len;
    long rate_limit;
    long key_grace;
    long webhook_secret_grace;     /* seconds a rotated-out webhook secret keeps signing */
    const char *download_base_url; /* without a trailing slash */
    long download_ttl;
    const char *files_root;
    long webhook_timeout;
    long webhook_retries[CONFIG_MAX_RETRIES]; /* delays in seconds */
    int webhook_retry_count;
    const char *webhook_ca_file; /* NULL: none */
    bool webhook_allow_private;
    long page_cache_ms; /* how long a worker may answer a catalogue page again; 0: never */
    bool request_log;   /* market-api logs a line per request; false: nginx's access log only */
    long statement_timeout_ms; /* the API's bound on one statement (MARKET_STATEMENT_TIMEOUT) */
    long workers;              /* the pool's size (MARKET_WORKERS, default: the cores) */
    long idle_exit;            /* MARKET_IDLE_EXIT: seconds idle before the pool stops; 0: never */
    long key_inflight; /* one key's requests served at once on a host (MARKET_KEY_INFLIGHT) */
    const char *metrics_file;   /* the counters a pool's workers share (app/api/ops/metrics.h) */
    long retention;             /* seconds finished rows are kept (market-webhookd prunes) */
    unsigned api_extensions;    /* CONFIG_EXT_* bits of MARKET_API_EXTENSIONS */
    long webhookd_concurrency;  /* deliveries in flight in one market-webhookd */
    const char *migrations_dir; /* market-admin migrate's folder, or NULL: beside the binary */
    double progress_seconds;    /* between market-admin's progress lines in a log; 0: none */
} market_config;

/* Fills cfg from the environment: every setting of the table, each checked, or its
 * default; the settings required under needs (CONFIG_NEED_*) must be set, and with
 * CONFIG_NEED_SECRET the secret is read from MARKET_SECRET_FILE. On failure writes one
 * line (no newline) naming the setting to err. */
bool config_load(market_config *cfg, int needs, char *err, size_t errlen);

/* The one setting name, checked as config_load checks it, into its field of cfg (the
 * other fields are left alone), for a program that needs it without the rest: false, with
 * err set, when the value is malformed or name is not a setting. */
bool config_load_one(market_config *cfg, const char *name, char *err, size_t errlen);

/* Parses MARKET_API_EXTENSIONS, "webhook-management" or a comma list of extension names
 * (white space around a name and empty items are ignored) into CONFIG_EXT_* bits.
 * False on a name it does not know, copied into unknown (NUL-terminated, cut to fit). */
bool config_parse_extensions(const char *text, unsigned *out, char *unknown, size_t unknown_len);

/* Parses "5s,5m,30m,2h" into seconds; false on any malformed element. */
bool config_parse_durations(const char *text, long *out, int max, int *count);

#endif
