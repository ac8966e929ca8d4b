/* The pure parts of `market-admin site` (site_text.c): what a site's name, host name and
 * limits may be, the names derived from a site's name (its user, slice, files), and the
 * filling in of the packaged templates (a site's settings file and nginx file). No
 * system call: unit tested (tests/unit/test_site_text.c). */
#ifndef MARKET_ADMIN_SITE_TEXT_H
#define MARKET_ADMIN_SITE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* A site's name: 1 to SITE_NAME_MAX lowercase letters, digits and hyphens, starting with
 * a letter, ending with a letter or a digit, no two hyphens in a row, and not "default"
 * (the single-instance units' site). It becomes a user name (market-NAME, at most 32
 * bytes), a unit instance, an nginx upstream and file names, so nothing else may pass. */
#define SITE_NAME_MAX 24

/* NULL when name is a valid site name, else why not (a constant sentence). */
const char *site_name_problem(const char *name);

/* NULL when text is a valid value for the option named opt, else why not. Host names
 * for nginx's server_name (one or more, space-separated; letters, digits, ".", "-", a
 * leading "*." or "~" is refused: no regular expression), a listen address, a CPU quota
 * ("50%", 1% to 100000%), a memory bound (bytes with K, M, G or T, or "infinity"), and
 * any value written into the settings file (printable, no ", \, $ or `, which both sh
 * and systemd's EnvironmentFile= would read otherwise). */
const char *site_server_name_problem(const char *text);
const char *site_listen_problem(const char *text);
const char *site_cpu_quota_problem(const char *text);
const char *site_memory_max_problem(const char *text);
const char *site_setting_problem(const char *text);

/* The slice of a site's units: "market-sites-NAME.slice" with each hyphen of NAME written
 * "_" (a hyphen in a slice's name is a level of the tree: market-sites-a-b.slice would
 * sit inside market-sites-a.slice, under site a's limits). */
void site_slice_name(const char *name, char *out, size_t outsz);

/* tmpl with every {{KEY}} of keys[i] replaced by values[i]; a {{...}} left is an error:
 * NULL, with *left set to where it starts. The result is malloc'd. */
char *site_fill(const char *tmpl, const char *const *keys, const char *const *values, size_t n,
                const char **left);

/* The settings file tmpl (NAME=value lines, "#NAME=value" for one at its default) with
 * each names[i] set to values[i]: its first line "NAME=..." or "#NAME=..." becomes
 * NAME="value", or the line is added at the end when there is none. Malloc'd. */
char *site_env_set(const char *tmpl, const char *const *names, const char *const *values, size_t n);

/* The value of name in a settings file's text (its last uncommented NAME= line, double
 * quotes removed), into out; false when it has none. */
bool site_env_get(const char *text, const char *name, char *out, size_t outsz);

#endif
