#include "json_body.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

static bool fail(json_body_error *err, const char *code, const char *param, const char *message)
{
    err->code = code;
    snprintf(err->param, sizeof err->param, "%s", param != NULL ? param : "");
    err->message = message;
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The value of the four hex digits at s (a \\u escape's), or -1. */
static long hex4(const char *s)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* What scan finds in the raw text. */
typedef struct {
    bool nul_escape;     /* \u0000 anywhere */
    bool lone_surrogate; /* a \uD800-\uDFFF escape that is not half of a pair */
    bool single_quote;   /* a ' outside strings */
    size_t top_keys;     /* keys of the top-level object */
} scan_result;

/* The escape at s[j] ('\\' then 'u' then four hex digits, j + 5 < n): 12 characters when
 * it is a surrogate pair, 6 for any other; records a NUL or a lone surrogate. */
static size_t scan_u_escape(const char *s, size_t n, size_t j, scan_result *out)
{
    long code = hex4(s + j + 2);
    if (code == 0)
        out->nul_escape = true;
    if (code >= 0xDC00 && code <= 0xDFFF) /* a low half with no high half before it */
        out->lone_surrogate = true;
    if (code >= 0xD800 && code <= 0xDBFF) {
        long low = j + 11 < n && s[j + 6] == '\\' && s[j + 7] == 'u' ? hex4(s + j + 8) : -1;
        if (low >= 0xDC00 && low <= 0xDFFF)
            return 12;
        out->lone_surrogate = true; /* json-c would store U+FFFD in its place */
    }
    return 6;
}

/* One pass over the raw text, outside json-c: finds escaped NULs and lone surrogates
 * anywhere, single quotes outside strings, and counts the keys of the top-level object
 * (a string at depth 1 followed by ':'). Only meaningful for text json-c then accepts; on
 * other text its answers do not matter. */
static void scan(const char *s, size_t n, scan_result *out)
{
    int depth = 0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\'') {
            out->single_quote =
                true; /* json-c takes 'strings' even in strict mode; JSON does not */
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != '"') {
                if (s[j] != '\\')
                    j++;
                else if (j + 5 < n && s[j + 1] == 'u')
                    j += scan_u_escape(s, n, j, out);
                else
                    j += 2; /* the escaped character, a quote included */
            }
            size_t k = j + 1;
            while (k < n && is_space(s[k]))
                k++;
            if (depth == 1 && k < n && s[k] == ':')
                out->top_keys++;
            i = j;
        }
    }
}

bool json_body_parse(const char *data, size_t len, const char *const *fields, json_object **out,
                     json_body_error *err)
{
    *out = NULL;
    if (!utf8_valid(data, len))
        return fail(err, "body_invalid_json", NULL, "the body is not valid UTF-8");

    json_tokener *tok = json_tokener_new_ex(JSON_BODY_MAX_DEPTH);
    if (tok == NULL)
        return fail(err, "body_invalid_json", NULL, "the body could not be parsed");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *obj = json_tokener_parse_ex(tok, data, (int)len);
    bool parsed = json_tokener_get_error(tok) == json_tokener_success;
    size_t end = parsed ? json_tokener_get_parse_end(tok) : 0;
    json_tokener_free(tok);
    while (parsed && end < len && is_space(data[end]))
        end++; /* white space may follow the object; data need not be NUL-terminated */
    if (!parsed || end != len || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return fail(err, "body_invalid_json", NULL, "the body must be one JSON object");
    }

    scan_result found;
    scan(data, len, &found);
    if (found.single_quote) {
        json_object_put(obj);
        return fail(err, "body_invalid_json", NULL, "the body must be one JSON object");
    }
    if (found.nul_escape) {
        json_object_put(obj);
        return fail(err, "parameter_invalid", NULL, "the body must not contain NUL characters");
    }
    if (found.lone_surrogate) {
        json_object_put(obj);
        return fail(err, "parameter_invalid", NULL,
                    "the body must not contain a lone surrogate (\\uD800-\\uDFFF not in a pair)");
    }
    if (found.top_keys != (size_t)json_object_object_length(obj)) {
        json_object_put(obj);
        return fail(err, "parameter_duplicated", NULL, "a field of the body is given twice");
    }
    json_object_object_foreach(obj, key, value)
    {
        (void)value;
        bool known = false;
        for (int i = 0; fields[i] != NULL && !known; i++)
            known = strcmp(fields[i], key) == 0;
        if (!known) {
            fail(err, "parameter_unknown", key, "the body has an unknown field");
            json_object_put(obj);
            return false;
        }
    }
    *out = obj;
    return true;
}
