/* The pure parts of `market-admin site`: names, values and templates (site_text.h). */
#include "site_text.h"

#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "mem.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

const char *site_name_problem(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "a site's name cannot be empty";
    if (n > SITE_NAME_MAX)
        return "a site's name has at most 24 characters (it becomes the user market-NAME)";
    if (!(name[0] >= 'a' && name[0] <= 'z'))
        return "a site's name starts with a lowercase letter";
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '-') {
            if (name[i + 1] == '-')
                return "a site's name has no two hyphens in a row";
            continue;
        }
        if (!is_lower_alnum(name[i]))
            return "a site's name has only lowercase letters, digits and hyphens";
    }
    if (name[n - 1] == '-')
        return "a site's name ends with a letter or a digit";
    /* The units without an instance are the default site: a site named so would be
     * taken for it in every message, document and support request. */
    if (strcmp(name, "default") == 0)
        return "\"default\" is the name of the single-instance site (market-api.service)";
    return NULL;
}

static bool all_in(const char *s, const char *set)
{
    return strspn(s, set) == strlen(s);
}

#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-"

/* One host name: labels of letters, digits and hyphens; "*." in front for a wildcard. */
static bool host_valid(const char *h, size_t n)
{
    if (n >= 2 && h[0] == '*' && h[1] == '.') {
        h += 2;
        n -= 2;
    }
    if (n == 0 || n > 253 || h[0] == '.' || h[0] == '-' || h[n - 1] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (strchr(HOST_CHARS, h[i]) == NULL || (h[i] == '.' && h[i + 1] == '.'))
            return false;
    return true;
}

const char *site_server_name_problem(const char *text)
{
    const char *p = text;
    int names = 0;
    while (*p != '\0') {
        size_t n = strcspn(p, " ");
        if (n > 0) {
            if (!host_valid(p, n))
                return "--server-name takes host names (letters, digits, dots, hyphens; "
                       "\"*.\" in front for a wildcard), separated by spaces";
            names++;
        }
        p += n;
        p += strspn(p, " ");
    }
    return names > 0 ? NULL : "--server-name needs a host name";
}

const char *site_listen_problem(const char *text)
{
    if (*text == '\0' || strlen(text) > 128 ||
        !all_in(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:[]_ -"))
        return "--listen takes nginx's listen address, such as 80, 127.0.0.1:8080 or [::]:80";
    return NULL;
}

/* Digits only, 1 to 9 of them, no leading zero. */
static bool small_number(const char *s, size_t n, unsigned long *out)
{
    if (n == 0 || n > 9 || s[0] == '0')
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    *out = v;
    return true;
}

const char *site_cpu_quota_problem(const char *text)
{
    size_t n = strlen(text);
    unsigned long v;
    if (n < 2 || text[n - 1] != '%' || !small_number(text, n - 1, &v) || v > 100000)
        return "--cpu-quota is a share of one CPU, 1% to 100000% (200%: two CPUs)";
    return NULL;
}

const char *site_memory_max_problem(const char *text)
{
    if (strcmp(text, "infinity") == 0)
        return NULL;
    size_t n = strlen(text);
    unsigned long v;
    size_t digits = n > 0 && strchr("KMGT", text[n - 1]) != NULL ? n - 1 : n;
    if (!small_number(text, digits, &v))
        return "--memory-max is a size in bytes, with K, M, G or T (512M, 2G), or infinity";
    return NULL;
}

const char *site_setting_problem(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\' || *p == '$' || *p == '`')
            return "a setting cannot hold a control character, \", \\, $ or `";
    return NULL;
}

void site_slice_name(const char *name, char *out, size_t outsz)
{
    char escaped[SITE_NAME_MAX + 1];
    size_t i = 0;
    for (; i < SITE_NAME_MAX && name[i] != '\0'; i++)
        escaped[i] = name[i] == '-' ? '_' : name[i];
    escaped[i] = '\0';
    snprintf(out, outsz, "market-sites-%s.slice", escaped);
}

/* The index of the key whose {{KEY}} starts at p, or -1. */
static long find_key(const char *p, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(keys[i]);
        if (strncmp(p + 2, keys[i], k) == 0 && strncmp(p + 2 + k, "}}", 2) == 0)
            return (long)i;
    }
    return -1;
}

char *site_fill(const char *tmpl, const char *const *keys, const char *const *values, size_t n,
                const char **left)
{
    buf b;
    buf_init(&b, strlen(tmpl) + 1024);
    const char *p = tmpl;
    const char *open;
    while ((open = strstr(p, "{{")) != NULL) {
        buf_append(&b, p, (size_t)(open - p));
        long i = find_key(open, keys, n);
        if (i < 0) {
            *left = open;
            buf_free(&b);
            return NULL;
        }
        buf_puts(&b, values[i]);
        p = open + 2 + strlen(keys[i]) + 2;
    }
    buf_puts(&b, p);
    return b.data;
}

/* True when line (up to its end) sets name, commented out or not. */
static bool line_sets(const char *line, const char *name)
{
    if (*line == '#')
        line++;
    size_t k = strlen(name);
    return strncmp(line, name, k) == 0 && line[k] == '=';
}

char *site_env_set(const char *tmpl, const char *const *names, const char *const *values, size_t n)
{
    bool done[16] = {false};
    if (n > COUNT(done))
        n = COUNT(done);
    buf b;
    buf_init(&b, strlen(tmpl) + 1024);
    for (const char *line = tmpl; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        size_t i = 0;
        while (i < n && (done[i] || !line_sets(line, names[i])))
            i++;
        if (i < n) {
            buf_printf(&b, "%s=\"%s\"\n", names[i], values[i]);
            done[i] = true;
        } else {
            buf_append(&b, line, len);
            buf_putc(&b, '\n');
        }
        line += len + (line[len] == '\n');
    }
    for (size_t i = 0; i < n; i++)
        if (!done[i])
            buf_printf(&b, "%s=\"%s\"\n", names[i], values[i]);
    return b.data;
}

bool site_env_get(const char *text, const char *name, char *out, size_t outsz)
{
    bool found = false;
    size_t k = strlen(name);
    for (const char *line = text; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        if (strncmp(line, name, k) == 0 && line[k] == '=') {
            const char *v = line + k + 1;
            size_t vlen = len - k - 1;
            if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
                v++;
                vlen -= 2;
            }
            snprintf(out, outsz, "%.*s", (int)vlen, v);
            found = true;
        }
        line += len + (line[len] == '\n');
    }
    return found;
}
