/* config: the MARKET_* environment, read and checked once at start.
 *
 * A missing or invalid setting is reported as one line and the program stops: it is
 * better not to start than to serve with a half-understood configuration. */
#ifndef MARKET_CONFIG_H
#define MARKET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONFIG_MAX_RETRIES 32
/* The packaged pool's runtime directory (market-api.service: RuntimeDirectory=market-api). */
#define CONFIG_METRICS_FILE_DEFAULT "/run/market-api/metrics"
#define CONFIG_SECRET_MAX 4096
/* MARKET_RETENTION's default: 30 days (docs/contract.md section 12). */
#define CONFIG_RETENTION_DEFAULT (30L * 86400)

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

typedef struct {
    const char *db;       /* libpq conninfo; "" means libpq's defaults */
    const char *db_read;  /* conninfo of a read replica for catalogue reads, or NULL */
    long db_read_max_lag; /* seconds a replica may be behind before reads leave it */
    uint8_t secret[CONFIG_SECRET_MAX];
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
    long request_log;   /* 1: market-api logs a line per request; 0: nginx's access log only */
    long statement_timeout_ms; /* the API's bound on one statement (MARKET_STATEMENT_TIMEOUT) */
    long workers;              /* the pool's size (MARKET_WORKERS, default: the cores) */
    long idle_exit;            /* MARKET_IDLE_EXIT: seconds idle before the pool stops; 0: never */
    long key_inflight; /* one key's requests served at once on a host (MARKET_KEY_INFLIGHT) */
    const char *metrics_file; /* the counters a pool's workers share (lib/metrics.h) */
    long retention;           /* seconds finished rows are kept (market-webhookd prunes) */
    unsigned api_extensions;  /* CONFIG_EXT_* bits of MARKET_API_EXTENSIONS */
} market_config;

/* Fills cfg from the environment. On failure writes one line (no newline) to err. */
bool config_load(market_config *cfg, int needs, char *err, size_t errlen);

/* Parses MARKET_API_EXTENSIONS, "webhook-management" or a comma list of extension names
 * (white space around a name and empty items are ignored) into CONFIG_EXT_* bits.
 * False on a name it does not know, copied into unknown (NUL-terminated, cut to fit). */
bool config_parse_extensions(const char *text, unsigned *out, char *unknown, size_t unknown_len);

/* Parses "5s,5m,30m,2h" into seconds; false on any malformed element. */
bool config_parse_durations(const char *text, long *out, int max, int *count);

#endif
