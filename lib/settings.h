/* settings: the one table of every MARKET_* setting the programs read (lib/settings.c).
 *
 * Each entry says what the setting is (its type and range), its default, when it is
 * required, which programs read it, one line of help and the paragraph of market.env(5),
 * and the line the installed settings file has for it. Everything else comes from here:
 * config_load (lib/config.c) walks the table, each program's --help lists the settings it
 * reads, and tools/settings-doc writes the settings file's blocks (hence market.env(5))
 * and the README's table. settings_getenv is the only place that reads a MARKET_*
 * variable (tests/cli/settings.sh fails on any other). */
#ifndef MARKET_SETTINGS_H
#define MARKET_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config.h"

typedef enum {
    SETTING_CONNINFO,      /* a libpq connection string, passed on unchecked */
    SETTING_FILE,          /* a file or folder name */
    SETTING_ABSOLUTE_PATH, /* a file or folder name starting with "/" */
    SETTING_URL,           /* http:// or https://, kept without its trailing slashes */
    SETTING_INTEGER,       /* an integer from min to max */
    SETTING_SECONDS,       /* a decimal number of seconds from min to max */
    SETTING_SWITCH,        /* 0 or 1 */
    SETTING_DURATIONS,     /* a comma list of durations, "5s,5m,2h" */
    SETTING_DURATION,      /* one duration, "30d" */
    SETTING_EXTENSIONS,    /* a comma list of CONFIG_EXTENSIONS_KNOWN names */
} setting_type;

/* The programs (and units) that read a setting, for their --help and the README. */
enum {
    SETTING_API = 1 << 0,      /* market-api */
    SETTING_WEBHOOKD = 1 << 1, /* market-webhookd */
    SETTING_ADMIN = 1 << 2,    /* market-admin */
    SETTING_SERVICE = 1 << 3,  /* market-api.service, for the pool's size */
};

typedef struct {
    const char *name;
    setting_type type;
    long min, max; /* SETTING_INTEGER and SETTING_SECONDS */
    /* The default, written as a value would be; NULL: none, or computed_default. */
    const char *fallback;
    /* A default that depends on the host or on a setting above this one in the table. */
    long (*computed_default)(const market_config *cfg);
    int required;             /* the CONFIG_NEED_* bits of config_load under which it must be set */
    unsigned readers;         /* SETTING_API and so on */
    size_t field;             /* where config_load stores it: offsetof(market_config, ...) */
    size_t count_field;       /* SETTING_DURATIONS: where the count goes */
    const char *help;         /* one line, lowercase, no final stop */
    const char *default_help; /* the default in words, when fallback does not say it */
    const char *description;  /* market.env(5)'s paragraph, lines ending in "\n" */
    const char *file_value;   /* the value the installed file shows; NULL: fallback */
    bool set_in_file;         /* the installed file sets it ("NAME=" not "#NAME=") */
} setting;

extern const setting settings[];
extern const size_t settings_count;

/* The entry of name, or NULL. */
const setting *settings_find(const char *name);

/* The setting's value in the environment, or NULL when it is unset or empty. */
const char *settings_getenv(const setting *s);

/* The settings that readers read, for --help: per setting its name, then its help line
 * with its range and default, indented. */
void settings_write_help(FILE *out, unsigned readers);

/* The blocks of the settings file (etc/market.env.in's header comes first): "## NAME",
 * the description as "## " lines, then "NAME=value" or "#NAME=value"; a blank line
 * between blocks. @NAME@ placeholders are left for the Makefile to render. */
void settings_write_env(FILE *out);

/* The README's markdown table of the settings. */
void settings_write_markdown(FILE *out);

#endif
