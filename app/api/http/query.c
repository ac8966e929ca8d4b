/* query: the query string parser every route's parameters go through before the route
 * sees them; a file of its own because it is pure, unit tested and fuzzed
 * (tests/fuzz/fuzz_query.c). */
#include "query.h"

#include <string.h>

#include "text.h"

static bool fail(query_error *err, query_fault fault, const char *name)
{
    err->fault = fault;
    err->name = name;
    err->name_malformed = false;
    return false;
}

/* A malformed name as the client sent it, printable and cut: a client finds it in its
 * URL, and the error (JSON, a log line) holds no byte that is not UTF-8. */
static char *raw_name(arena *a, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = arena_alloc(a, QUERY_RAW_NAME_MAX + 1);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = c > 0x20 && c < 0x7F;
        if (len + (plain ? 1 : 3) > QUERY_RAW_NAME_MAX)
            break;
        if (plain) {
            out[len++] = (char)c;
        } else {
            out[len++] = '%';
            out[len++] = hex[c >> 4];
            out[len++] = hex[c & 15];
        }
    }
    out[len] = '\0';
    return out;
}

/* Decodes one name or value into the arena; NULL on malformed input. */
static char *decode(arena *a, const char *s, size_t n)
{
    char *out = arena_alloc(a, n + 1);
    size_t len;
    return percent_decode(s, n, true, out, &len) ? out : NULL;
}

bool query_parse(arena *a, const char *qs, const char *const *names, query_params *out,
                 query_error *err)
{
    int known = 0;
    memset(out, 0, sizeof *out);
    for (; names[known] != NULL; known++)
        out->names[known] = names[known];

    const char *p = qs != NULL ? qs : "";
    while (*p != '\0') {
        size_t seg = strcspn(p, "&");
        const char *eq = memchr(p, '=', seg);
        size_t name_len = eq != NULL ? (size_t)(eq - p) : seg;
        const char *raw_value = eq != NULL ? eq + 1 : p + seg;
        size_t value_len = eq != NULL ? seg - name_len - 1 : 0;

        if (seg == 0) { /* "a=1&&b=2" or a trailing '&': nothing to read */
            p++;
            continue;
        }
        char *name = decode(a, p, name_len);
        if (name == NULL) {
            fail(err, QUERY_MALFORMED, raw_name(a, p, name_len));
            err->name_malformed = true;
            return false;
        }
        int slot = -1;
        for (int i = 0; i < known; i++)
            if (strcmp(names[i], name) == 0)
                slot = i;
        if (slot < 0)
            return fail(err, QUERY_UNKNOWN, name);
        if (out->values[slot] != NULL)
            return fail(err, QUERY_DUPLICATED, names[slot]);
        if (value_len > 3 * QUERY_MAX_VALUE)
            return fail(err, QUERY_TOO_LONG, names[slot]);
        char *value = decode(a, raw_value, value_len);
        if (value == NULL)
            return fail(err, QUERY_MALFORMED, names[slot]);
        if (strlen(value) > QUERY_MAX_VALUE)
            return fail(err, QUERY_TOO_LONG, names[slot]);
        out->values[slot] = value;
        p += seg;
        if (*p == '&')
            p++;
    }
    return true;
}

const char *query_get(const query_params *q, const char *name)
{
    for (int i = 0; i < QUERY_MAX_PARAMS && q->names[i] != NULL; i++)
        if (strcmp(q->names[i], name) == 0)
            return q->values[i];
    return NULL;
}
