/* config: reads the MARKET_* settings into a market_config once, at start, by walking
 * the table of lib/settings.c: each value is parsed and checked as its type says, an unset
 * one takes its default, a required one must be there. The parsing of the setting types
 * lives here, the list of settings there. */
#include "config.h"
#include "mem.h"
#include "settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool parse_long(const char *text, long min, long max, long *out)
{
    /* A digit or a minus first: strtol would also skip white space and take a plus. */
    if ((*text < '0' || *text > '9') && *text != '-')
        return false;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* The secret itself, from the file MARKET_SECRET_FILE names (required, so set). */
static bool load_secret(market_config *cfg, char *err, size_t errlen)
{
    const char *path = cfg->secret_file;
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

/* A decimal number of seconds from min to max, "0.5" or "5". */
static bool parse_seconds(const char *text, long min, long max, double *out)
{
    /* Digits or a point first: strtod would also take white space, a sign or "inf". */
    if ((*text < '0' || *text > '9') && *text != '.')
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v >= (double)min && v <= (double)max))
        return false;
    *out = v;
    return true;
}

static bool is_url(const char *text)
{
    return strncmp(text, "https://", 8) == 0 || strncmp(text, "http://", 7) == 0;
}

/* What a value of the type is, for the messages. */
static const char *what_it_is(setting_type type)
{
    switch (type) {
    case SETTING_CONNINFO:
        return "a libpq connection string";
    case SETTING_FILE:
        return "a file name";
    case SETTING_ABSOLUTE_PATH:
        return "an absolute path";
    case SETTING_URL:
        return "an http:// or https:// URL";
    case SETTING_INTEGER:
        return "an integer";
    case SETTING_SECONDS:
        return "a number of seconds";
    case SETTING_SWITCH:
        return "0 or 1";
    case SETTING_DURATIONS:
        return "a comma list of durations such as 5s,5m,2h";
    case SETTING_DURATION:
        return "one duration in s, m, h or d such as 30d (at most 366d)";
    case SETTING_EXTENSIONS:
        return "a comma list of extensions (known: " CONFIG_EXTENSIONS_KNOWN ")";
    }
    return "a value";
}

/* What a setting's text was parsed into, before it goes into its field. */
typedef struct {
    const char *text; /* the value, or the default; NULL: none */
    long number;      /* SETTING_INTEGER, SETTING_SWITCH, SETTING_DURATION */
    double seconds;   /* SETTING_SECONDS */
    long durations[CONFIG_MAX_RETRIES];
    int count;     /* SETTING_DURATIONS */
    unsigned bits; /* SETTING_EXTENSIONS */
} parsed;

/* Checks text as s's type says; false with one line in err when it is malformed. */
static bool parse_setting(const setting *s, const char *text, parsed *p, char *err, size_t errlen)
{
    bool ok = true;
    char unknown[64];
    switch (s->type) {
    case SETTING_CONNINFO:
    case SETTING_FILE:
        break;
    case SETTING_ABSOLUTE_PATH:
        ok = text[0] == '/';
        break;
    case SETTING_URL:
        ok = is_url(text);
        break;
    case SETTING_INTEGER:
        if (!parse_long(text, s->min, s->max, &p->number)) {
            snprintf(err, errlen, "%s must be an integer from %ld to %ld", s->name, s->min, s->max);
            return false;
        }
        break;
    case SETTING_SECONDS:
        if (!parse_seconds(text, s->min, s->max, &p->seconds)) {
            snprintf(err, errlen, "%s must be a number of seconds from %ld to %ld", s->name, s->min,
                     s->max);
            return false;
        }
        break;
    case SETTING_SWITCH:
        ok = strcmp(text, "0") == 0 || strcmp(text, "1") == 0;
        p->number = text[0] == '1';
        break;
    case SETTING_DURATIONS:
        ok = config_parse_durations(text, p->durations, CONFIG_MAX_RETRIES, &p->count);
        break;
    case SETTING_DURATION:
        ok = config_parse_durations(text, &p->number, 1, &p->count);
        break;
    case SETTING_EXTENSIONS:
        if (!config_parse_extensions(text, &p->bits, unknown, sizeof unknown)) {
            snprintf(err, errlen,
                     "%s names an unknown extension \"%s\" (known: " CONFIG_EXTENSIONS_KNOWN ")",
                     s->name, unknown);
            return false;
        }
        break;
    }
    if (!ok)
        snprintf(err, errlen, "%s must be %s", s->name, what_it_is(s->type));
    return ok;
}

/* Puts p into s's field of cfg (memcpy: the field's type is the setting type's). */
static void store(const setting *s, const parsed *p, market_config *cfg)
{
    char *field = (char *)cfg + s->field;
    bool on = p->number == 1;
    const char *url = NULL;
    switch (s->type) {
    case SETTING_CONNINFO:
    case SETTING_FILE:
    case SETTING_ABSOLUTE_PATH:
        memcpy(field, &p->text, sizeof p->text);
        break;
    case SETTING_URL:
        /* Kept without its trailing slashes: links are base + "/" + token. */
        if (p->text != NULL) {
            size_t n = strlen(p->text);
            while (n > 0 && p->text[n - 1] == '/')
                n--;
            url = xstrndup(p->text, n);
        }
        memcpy(field, &url, sizeof url);
        break;
    case SETTING_INTEGER:
    case SETTING_DURATION:
        memcpy(field, &p->number, sizeof p->number);
        break;
    case SETTING_SECONDS:
        memcpy(field, &p->seconds, sizeof p->seconds);
        break;
    case SETTING_SWITCH:
        memcpy(field, &on, sizeof on);
        break;
    case SETTING_DURATIONS:
        memcpy(field, p->durations, sizeof p->durations);
        memcpy((char *)cfg + s->count_field, &p->count, sizeof p->count);
        break;
    case SETTING_EXTENSIONS:
        memcpy(field, &p->bits, sizeof p->bits);
        break;
    }
}

/* Reads one setting into cfg: its value, else its default; required under needs. */
static bool load_setting(const setting *s, market_config *cfg, int needs, char *err, size_t errlen)
{
    const char *text = settings_getenv(s);
    if (text == NULL && (s->required & needs) != 0) {
        snprintf(err, errlen, "%s is required (%s)", s->name, what_it_is(s->type));
        return false;
    }
    parsed p;
    memset(&p, 0, sizeof p);
    if (text == NULL && s->computed_default != NULL) {
        p.number = s->computed_default(cfg);
    } else {
        p.text = text != NULL ? text : s->fallback;
        if (p.text != NULL && !parse_setting(s, p.text, &p, err, errlen))
            return false;
    }
    store(s, &p, cfg);
    return true;
}

bool config_load(market_config *cfg, int needs, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < settings_count; i++)
        if (!load_setting(&settings[i], cfg, needs, err, errlen))
            return false;
    if ((needs & CONFIG_NEED_SECRET) != 0 && !load_secret(cfg, err, errlen))
        return false;
    return true;
}

bool config_load_one(market_config *cfg, const char *name, char *err, size_t errlen)
{
    const setting *s = settings_find(name);
    if (s == NULL) {
        snprintf(err, errlen, "%s is not a setting (lib/settings.c)", name);
        return false;
    }
    return load_setting(s, cfg, 0, err, errlen);
}
