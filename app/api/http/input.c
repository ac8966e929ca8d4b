/* input: each declared input checked and converted by its type, in one pass over the
 * route's table (see input.h). Why a table and not code per route: the rules, messages
 * and defaults of an input are written once, and no handler parses a string again. */
#include "input.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ids.h"
#include "money.h"
#include "query.h"
#include "text.h"
#include "url.h"

#define UNKNOWN_NAME_MAX 64 /* an unknown name longer than this is cut in param */

/* The typed value of spec s in out, as a T. */
#define SLOT(T, out, s) ((T *)(void *)((char *)(out) + (s)->offset))

static bool fail(input_error *err, const char *code, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail(input_error *err, const char *code, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    err->param = param;
    return false;
}

static bool refuse(const input_spec *s, input_error *err)
{
    return fail(err, "parameter_invalid", s->name, "%s", s->expects);
}

/* Writes the value of an input that was not given. */
static void set_default(const input_spec *s, void *out)
{
    switch (s->type) {
    case INPUT_INT:
        *SLOT(long, out, s) = s->def;
        break;
    case INPUT_ENUM:
        *SLOT(int, out, s) = (int)s->def;
        break;
    case INPUT_ENUM_SET:
        *SLOT(unsigned, out, s) = (unsigned)s->def;
        break;
    case INPUT_BOOL:
        *SLOT(int, out, s) = -1;
        break;
    case INPUT_DECIMAL:
        memset(SLOT(input_decimal, out, s), 0, sizeof(input_decimal));
        break;
    case INPUT_TIMESTAMP:
        memset(SLOT(input_time, out, s), 0, sizeof(input_time));
        break;
    case INPUT_URL:
        *SLOT(const url_parts *, out, s) = NULL;
        break;
    case INPUT_TEXT:
    case INPUT_STRING:
    case INPUT_SLUG:
    case INPUT_HANDLE:
        *SLOT(const char *, out, s) = NULL;
        break;
    }
}

/* An integer written plainly: "020", "+5" and " 5" are mistakes, not 20, 5 and 5. */
static bool int_from_text(const char *v, long *n)
{
    size_t len = strlen(v);
    if (len < 1 || len > 18 || (v[0] == '0' && len > 1) || strspn(v, "0123456789") != len)
        return false;
    long x = 0;
    for (const char *p = v; *p != '\0'; p++)
        x = x * 10 + (*p - '0');
    *n = x;
    return true;
}

/* A decimal of decimal_valid's form, into units and 10^-12 parts. */
static void decimal_from_text(const char *v, input_decimal *d)
{
    d->text = v;
    d->units = 0;
    d->fraction = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9'; p++)
        d->units = d->units * 10 + (*p - '0');
    int64_t place = INPUT_DECIMAL_SCALE / 10;
    if (*p == '.')
        for (p++; *p != '\0'; p++, place /= 10)
            d->fraction += (*p - '0') * place;
}

static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    return v;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* A date-time of rfc3339_valid's form (a fraction of at most 6 digits), into its instant. */
static void time_from_text(const char *v, input_time *t)
{
    t->text = v;
    int64_t days = days_from_civil(digits(v, 4), digits(v + 5, 2), digits(v + 8, 2));
    t->seconds =
        days * 86400 + digits(v + 11, 2) * 3600 + digits(v + 14, 2) * 60 + digits(v + 17, 2);
    t->micros = 0;
    const char *p = v + 19;
    if (*p == '.') {
        int32_t place = 100000;
        for (p++; *p >= '0' && *p <= '9'; p++, place /= 10)
            t->micros += (*p - '0') * place;
    }
    if (*p == '+' || *p == '-') {
        int64_t offset = digits(p + 1, 2) * 3600 + digits(p + 4, 2) * 60;
        t->seconds -= *p == '+' ? offset : -offset;
    }
}

static int enum_index(const input_spec *s, const char *v, size_t len)
{
    for (int i = 0; s->values[i] != NULL; i++)
        if (strlen(s->values[i]) == len && memcmp(s->values[i], v, len) == 0)
            return i;
    return -1;
}

static bool url_from_text(arena *a, const input_spec *s, const char *v, size_t len, void *out,
                          input_error *err)
{
    url_parts *url = arena_alloc(a, sizeof *url);
    url_status st = url_parse(v, len, url);
    if (st == URL_NOT_HTTPS)
        return fail(err, "url_not_https", s->name, "%s must use https", s->name);
    if (st != URL_OK)
        return fail(err, "parameter_invalid", s->name, "%s", url->error);
    *SLOT(const url_parts *, out, s) = url;
    return true;
}

/* STRING: valid UTF-8 without NUL, min..max characters, no control character. */
static bool string_from_text(const input_spec *s, const char *v, size_t len, void *out,
                             input_error *err)
{
    if (!utf8_valid(v, len))
        return refuse(s, err);
    size_t chars = utf8_length(v, len);
    if (chars < (size_t)s->min || chars > (size_t)s->max)
        return refuse(s, err);
    if (text_has_control(v, len)) {
        if (s->detail == NULL)
            return refuse(s, err);
        return fail(err, "parameter_invalid", s->name, "%s", s->detail);
    }
    *SLOT(const char *, out, s) = v;
    return true;
}

/* A value given as text (a query value, or a JSON string): v[0..len), NUL-terminated. */
static bool from_text(arena *a, const input_spec *s, const char *v, size_t len, void *out,
                      input_error *err)
{
    long n;
    int i;
    switch (s->type) {
    case INPUT_TEXT:
        *SLOT(const char *, out, s) = v;
        return true;
    case INPUT_STRING:
        return string_from_text(s, v, len, out, err);
    case INPUT_INT:
        if (!int_from_text(v, &n) || n < s->min || n > s->max)
            return refuse(s, err);
        *SLOT(long, out, s) = n;
        return true;
    case INPUT_ENUM:
        if ((i = enum_index(s, v, len)) < 0)
            return refuse(s, err);
        *SLOT(int, out, s) = i;
        return true;
    case INPUT_SLUG:
    case INPUT_HANDLE:
        if (!(s->type == INPUT_SLUG ? ids_slug_valid(v) : ids_handle_valid(v)))
            return refuse(s, err);
        *SLOT(const char *, out, s) = v;
        return true;
    case INPUT_DECIMAL:
        if (!decimal_valid(v))
            return refuse(s, err);
        decimal_from_text(v, SLOT(input_decimal, out, s));
        return true;
    case INPUT_TIMESTAMP:
        if (!rfc3339_valid(v, 6, false))
            return refuse(s, err);
        time_from_text(v, SLOT(input_time, out, s));
        return true;
    case INPUT_BOOL:
        if (strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
            return refuse(s, err);
        *SLOT(int, out, s) = v[0] == 't';
        return true;
    case INPUT_URL:
        return url_from_text(a, s, v, len, out, err);
    case INPUT_ENUM_SET:
        break;
    }
    return refuse(s, err);
}

/* An unknown parameter's name for param: at most UNKNOWN_NAME_MAX bytes, cut between
 * two characters (the name is valid UTF-8, query_parse checked). */
static const char *unknown_name(arena *a, const char *name)
{
    size_t n = strlen(name);
    if (n <= UNKNOWN_NAME_MAX)
        return name;
    n = UNKNOWN_NAME_MAX;
    while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
        n--; /* a continuation byte: the character began before */
    return arena_strndup(a, name, n);
}

bool input_read_query(arena *a, const char *qs, const input_spec *specs, void *out,
                      input_error *err)
{
    const char *names[QUERY_MAX_PARAMS];
    size_t n = 0;
    for (; specs[n].name != NULL; n++)
        names[n] = specs[n].name;
    names[n] = NULL;

    query_params q;
    query_error qe;
    if (!query_parse(a, qs, names, &q, &qe)) {
        switch (qe.fault) {
        case QUERY_UNKNOWN: {
            const char *name = unknown_name(a, qe.name);
            return fail(err, "parameter_unknown", name, "unknown query parameter %s%s",
                        name[0] != '\0' ? name : "(empty name)",
                        strlen(name) < strlen(qe.name) ? " (cut)" : "");
        }
        case QUERY_DUPLICATED:
            return fail(err, "parameter_duplicated", qe.name, "%s is given more than once",
                        qe.name);
        case QUERY_TOO_LONG:
            return fail(err, "parameter_invalid", qe.name, "%s is too long", qe.name);
        case QUERY_MALFORMED:
            break;
        }
        if (qe.name_malformed)
            return fail(err, "parameter_invalid", qe.name,
                        "the query parameter name %s is not valid percent-encoded UTF-8", qe.name);
        return fail(err, "parameter_invalid", qe.name, "%s is not valid percent-encoded UTF-8",
                    qe.name);
    }
    for (size_t i = 0; i < n; i++) {
        const char *v = q.values[i];
        if (v == NULL) {
            if (specs[i].required)
                return fail(err, "parameter_missing", specs[i].name, "%s is required",
                            specs[i].name);
            set_default(&specs[i], out);
        } else if (!from_text(a, &specs[i], v, strlen(v), out, err)) {
            return false;
        }
    }
    return true;
}

/* ENUM_SET: a non-empty array of the values, as a set of bits. */
static bool set_from_json(const input_spec *s, json_object *v, void *out, input_error *err)
{
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    if (n == 0)
        return refuse(s, err);
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        int k =
            json_object_is_type(e, json_type_string)
                ? enum_index(s, json_object_get_string(e), (size_t)json_object_get_string_len(e))
                : -1;
        if (k < 0)
            return fail(err, "parameter_invalid", s->name, "%s[%zu] %s", s->name, i, s->detail);
        bits |= 1u << k;
    }
    *SLOT(unsigned, out, s) = bits;
    return true;
}

/* A field given in a JSON body. */
static bool from_json(arena *a, const input_spec *s, json_object *v, void *out, input_error *err)
{
    switch (s->type) {
    case INPUT_INT: {
        /* A JSON integer: not 60.0, not "60". json-c saturates beyond 64 bits. */
        int64_t n = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : 0;
        if (!json_object_is_type(v, json_type_int) || n < s->min || n > s->max)
            return refuse(s, err);
        *SLOT(long, out, s) = (long)n;
        return true;
    }
    case INPUT_BOOL:
        if (!json_object_is_type(v, json_type_boolean))
            return refuse(s, err);
        *SLOT(int, out, s) = json_object_get_boolean(v) ? 1 : 0;
        return true;
    case INPUT_ENUM_SET:
        return set_from_json(s, v, out, err);
    default:
        break;
    }
    if (!json_object_is_type(v, json_type_string)) {
        if (s->type == INPUT_URL)
            return fail(err, "parameter_invalid", s->name, "%s must be a string", s->name);
        return refuse(s, err);
    }
    const char *text = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v);
    /* A URL is read byte for byte (url_parse refuses a NUL); other text must hold none. */
    if (s->type != INPUT_URL && strlen(text) != len)
        return refuse(s, err);
    return from_text(a, s, text, len, out, err);
}

bool input_read_body(arena *a, json_object *body, const input_spec *specs, void *out,
                     input_error *err)
{
    for (const input_spec *s = specs; s->name != NULL; s++) {
        json_object *v;
        if (body == NULL || !json_object_object_get_ex(body, s->name, &v)) {
            if (s->required)
                return fail(err, "parameter_missing", s->name, "%s is required", s->name);
            set_default(s, out);
        } else if (!from_json(a, s, v, out, err)) {
            return false;
        }
    }
    return true;
}

int input_decimal_cmp(const input_decimal *x, const input_decimal *y)
{
    if (x->units != y->units)
        return x->units < y->units ? -1 : 1;
    if (x->fraction != y->fraction)
        return x->fraction < y->fraction ? -1 : 1;
    return 0;
}
