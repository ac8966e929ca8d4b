#include "config.h"
#include "mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Reads an integer variable with a default; false (and err set) when it is malformed. */
static bool env_long(const char *name, long def, long min, long max, long *out, char *err,
                     size_t errlen)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        *out = def;
        return true;
    }
    if (parse_long(v, min, max, out))
        return true;
    snprintf(err, errlen, "%s must be an integer from %ld to %ld", name, min, max);
    return false;
}

/* The pool's default size: one worker per core, as tools/stack and the unit start it. */
static long cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 && n <= 256 ? n : 1;
}

static bool load_secret(market_config *cfg, char *err, size_t errlen)
{
    const char *path = getenv("MARKET_SECRET_FILE");
    if (path == NULL || *path == '\0') {
        snprintf(err, errlen, "MARKET_SECRET_FILE is required");
        return false;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "MARKET_SECRET_FILE %s: %s", path, strerror(errno));
        return false;
    }
    cfg->secret_len = fread(cfg->secret, 1, sizeof cfg->secret, f);
    fclose(f);
    /* A trailing newline from an editor or `echo` is not part of the secret. */
    while (cfg->secret_len > 0 &&
           (cfg->secret[cfg->secret_len - 1] == '\n' || cfg->secret[cfg->secret_len - 1] == '\r'))
        cfg->secret_len--;
    if (cfg->secret_len < 32) {
        snprintf(err, errlen, "MARKET_SECRET_FILE %s must hold at least 32 bytes", path);
        return false;
    }
    return true;
}

static const struct {
    const char *name;
    unsigned bit;
} extensions[] = {
    {"webhook-management", CONFIG_EXT_WEBHOOK_MANAGEMENT},
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

bool config_parse_extensions(const char *text, unsigned *out, char *unknown, size_t unknown_len)
{
    *out = 0;
    const char *p = text;
    while (*p != '\0') {
        while (is_blank(*p))
            p++;
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        size_t name_len = len;
        while (name_len > 0 && is_blank(p[name_len - 1]))
            name_len--;
        bool known = name_len == 0; /* an empty item (",," or a trailing comma) names none */
        for (size_t i = 0; i < sizeof extensions / sizeof extensions[0] && !known; i++) {
            if (strlen(extensions[i].name) == name_len &&
                strncmp(extensions[i].name, p, name_len) == 0) {
                *out |= extensions[i].bit;
                known = true;
            }
        }
        if (!known) {
            snprintf(unknown, unknown_len, "%.*s", (int)name_len, p);
            return false;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return true;
}

bool config_parse_durations(const char *text, long *out, int max, int *count)
{
    int n = 0;
    const char *p = text;
    while (*p != '\0') {
        /* Digits first: strtol would also skip any leading white space and take a sign. */
        if (*p < '0' || *p > '9')
            return false;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno != 0 || v <= 0)
            return false;
        long unit;
        switch (*end) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'd':
            unit = 86400;
            break;
        default:
            return false;
        }
        if (v > 366L * 86400 / unit || n == max)
            return false;
        out[n++] = v * unit;
        p = end + 1;
        if (*p == ',') {
            p++;
            if (*p == '\0')
                return false;
        } else if (*p != '\0') {
            return false;
        }
    }
    if (n == 0)
        return false;
    *count = n;
    return true;
}

bool config_load(market_config *cfg, int needs, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    const char *db = getenv("MARKET_DB");
    cfg->db = db != NULL ? db : "";
    const char *db_read = getenv("MARKET_DB_READ");
    cfg->db_read = db_read != NULL && *db_read != '\0' ? db_read : NULL;

    if ((needs & CONFIG_NEED_SECRET) && !load_secret(cfg, err, errlen))
        return false;
    if (!env_long("MARKET_RATE_LIMIT", 600, 1, 1000000000, &cfg->rate_limit, err, errlen) ||
        !env_long("MARKET_KEY_GRACE", 86400, 0, 365L * 86400, &cfg->key_grace, err, errlen) ||
        !env_long("MARKET_WEBHOOK_SECRET_GRACE", 86400, 0, 7L * 86400, &cfg->webhook_secret_grace,
                  err, errlen) ||
        !env_long("MARKET_DOWNLOAD_TTL", 3600, 60, 86400, &cfg->download_ttl, err, errlen) ||
        !env_long("MARKET_WEBHOOK_TIMEOUT", 10, 1, 300, &cfg->webhook_timeout, err, errlen) ||
        !env_long("MARKET_PAGE_CACHE_MS", 1000, 0, 10000, &cfg->page_cache_ms, err, errlen) ||
        !env_long("MARKET_REQUEST_LOG", 1, 0, 1, &cfg->request_log, err, errlen) ||
        !env_long("MARKET_STATEMENT_TIMEOUT", 2000, 10, 600000, &cfg->statement_timeout_ms, err,
                  errlen) ||
        !env_long("MARKET_WORKERS", cores(), 1, 256, &cfg->workers, err, errlen) ||
        !env_long("MARKET_IDLE_EXIT", 0, 0, 86400, &cfg->idle_exit, err, errlen) ||
        /* docs/contract.md section 3: half the host's workers, at least one */
        !env_long("MARKET_KEY_INFLIGHT", cfg->workers / 2 > 0 ? cfg->workers / 2 : 1, 1, 256,
                  &cfg->key_inflight, err, errlen) ||
        !env_long("MARKET_DB_READ_MAX_LAG", 10, 1, 86400, &cfg->db_read_max_lag, err, errlen))
        return false;

    const char *base = getenv("MARKET_DOWNLOAD_BASE_URL");
    const char *root = getenv("MARKET_FILES_ROOT");
    if (needs & CONFIG_NEED_DOWNLOADS) {
        if (base == NULL ||
            (strncmp(base, "https://", 8) != 0 && strncmp(base, "http://", 7) != 0)) {
            snprintf(err, errlen,
                     "MARKET_DOWNLOAD_BASE_URL is required (an http:// or https:// URL)");
            return false;
        }
        if (root == NULL || root[0] != '/') {
            snprintf(err, errlen, "MARKET_FILES_ROOT is required (an absolute path)");
            return false;
        }
    }
    if (base != NULL) {
        /* Store it without a trailing slash: links are base + "/" + token. */
        size_t n = strlen(base);
        while (n > 0 && base[n - 1] == '/')
            n--;
        cfg->download_base_url = xstrndup(base, n);
    }
    cfg->files_root = root;

    const char *retries = getenv("MARKET_WEBHOOK_RETRIES");
    if (retries == NULL || *retries == '\0')
        retries = "5s,5m,30m,2h,5h,10h,10h";
    if (!config_parse_durations(retries, cfg->webhook_retries, CONFIG_MAX_RETRIES,
                                &cfg->webhook_retry_count)) {
        snprintf(err, errlen,
                 "MARKET_WEBHOOK_RETRIES must be a comma list of durations such as 5s,5m,2h");
        return false;
    }
    const char *ca = getenv("MARKET_WEBHOOK_CA_FILE");
    cfg->webhook_ca_file = (ca != NULL && *ca != '\0') ? ca : NULL;

    const char *priv = getenv("MARKET_WEBHOOK_ALLOW_PRIVATE");
    if (priv != NULL && *priv != '\0' && strcmp(priv, "0") != 0 && strcmp(priv, "1") != 0) {
        snprintf(err, errlen, "MARKET_WEBHOOK_ALLOW_PRIVATE must be 0 or 1");
        return false;
    }
    cfg->webhook_allow_private = priv != NULL && strcmp(priv, "1") == 0;

    /* One duration in the unit of the retry delays, so that tests can keep seconds. */
    const char *retention = getenv("MARKET_RETENTION");
    int one = 0;
    cfg->retention = CONFIG_RETENTION_DEFAULT;
    if (retention != NULL && *retention != '\0' &&
        !config_parse_durations(retention, &cfg->retention, 1, &one)) {
        snprintf(err, errlen,
                 "MARKET_RETENTION must be one duration in s, m, h or d such as 30d "
                 "(at most 366d)");
        return false;
    }

    const char *ext = getenv("MARKET_API_EXTENSIONS");
    char unknown[64];
    if (ext != NULL &&
        !config_parse_extensions(ext, &cfg->api_extensions, unknown, sizeof unknown)) {
        snprintf(err, errlen,
                 "MARKET_API_EXTENSIONS names an unknown extension \"%s\" "
                 "(known: " CONFIG_EXTENSIONS_KNOWN ")",
                 unknown);
        return false;
    }

    const char *metrics = getenv("MARKET_METRICS_FILE");
    cfg->metrics_file =
        (metrics != NULL && *metrics != '\0') ? metrics : CONFIG_METRICS_FILE_DEFAULT;
    if (cfg->metrics_file[0] != '/') {
        snprintf(err, errlen, "MARKET_METRICS_FILE must be an absolute path");
        return false;
    }
    return true;
}
