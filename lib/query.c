#include "query.h"

#include <string.h>

#include "text.h"

static bool fail(query_error *err, const char *code, const char *param, const char *message)
{
    err->code = code;
    err->param = param;
    err->message = message;
    return false;
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
        if (name == NULL)
            return fail(err, "parameter_invalid", NULL,
                        "a query parameter name is not valid percent-encoded UTF-8");
        int slot = -1;
        for (int i = 0; i < known; i++)
            if (strcmp(names[i], name) == 0)
                slot = i;
        if (slot < 0)
            return fail(
                err, "parameter_unknown", name_len <= 64 && name[0] ? name : NULL,
                arena_printf(a, "unknown query parameter%s%.64s", name[0] ? " " : "", name));
        if (out->values[slot] != NULL)
            return fail(err, "parameter_duplicated", names[slot],
                        arena_printf(a, "%s is given more than once", names[slot]));
        if (value_len > 3 * QUERY_MAX_VALUE)
            return fail(err, "parameter_invalid", names[slot],
                        arena_printf(a, "%s is too long", names[slot]));
        char *value = decode(a, raw_value, value_len);
        if (value == NULL)
            return fail(err, "parameter_invalid", names[slot],
                        arena_printf(a, "%s is not valid percent-encoded UTF-8", names[slot]));
        if (strlen(value) > QUERY_MAX_VALUE)
            return fail(err, "parameter_invalid", names[slot],
                        arena_printf(a, "%s is too long", names[slot]));
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
