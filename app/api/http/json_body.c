/* json_body: the strictness json-c lacks, in the one file every request body passes
 * through before a handler sees it. It reads the raw text itself (escaped NULs, lone
 * surrogates, repeated keys) because json-c's tree has already lost what that needs.
 * Fuzzed (tests/fuzz/fuzz_json_body.c). */
#include "json_body.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

/* A field's name into param: at most size - 1 bytes, cut between two characters (a name
 * is valid UTF-8: the body was checked, and json-c writes its escapes as UTF-8), so that
 * the error, a JSON string, holds no broken character. */
static void copy_name(char *param, size_t size, const char *name)
{
    size_t n = strlen(name);
    if (n > size - 1) {
        n = size - 1;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--; /* a continuation byte: the character began before */
    }
    memcpy(param, name, n);
    param[n] = '\0';
}

/* Fills err: code, the field at fault (param NULL: none, the body as a whole; param may be
 * err->param, already filled; "" is a field of empty name, which is still one field) and
 * the message: before, the field's name, then after (the name left out for the body as a
 * whole, which is the only case without one). */
static bool fail(json_body_error *err, const char *code, const char *param, const char *before,
                 const char *after)
{
    err->code = code;
    err->named = param != NULL;
    if (param == NULL)
        err->param[0] = '\0';
    else if (param != err->param)
        copy_name(err->param, sizeof err->param, param);
    const char *name = !err->named             ? ""
                       : err->param[0] == '\0' ? "a field with an empty name"
                                               : err->param;
    snprintf(err->message, sizeof err->message, "%s%s%s", before, name, after);
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

/* What scan finds in the raw text: offsets of the first escaped NUL and the first lone
 * surrogate (NONE when there is none), and the number of keys of the top-level object. */
#define NONE ((size_t)-1)
typedef struct {
    size_t nul_escape;     /* \u0000 anywhere */
    size_t lone_surrogate; /* a \uD800-\uDFFF escape that is not half of a pair */
    bool single_quote;     /* a ' outside strings */
    size_t top_keys;       /* keys of the top-level object */
} scan_result;

/* The escape at s[j] ('\\' then 'u' then four hex digits, j + 5 < n): 12 characters when
 * it is a surrogate pair, 6 for any other; records a NUL or a lone surrogate. */
static size_t scan_u_escape(const char *s, size_t n, size_t j, scan_result *out)
{
    long code = hex4(s + j + 2);
    if (code == 0 && out->nul_escape == NONE)
        out->nul_escape = j;
    bool lone = code >= 0xDC00 && code <= 0xDFFF; /* a low half with no high half before it */
    size_t width = 6;
    if (code >= 0xD800 && code <= 0xDBFF) {
        long low = j + 11 < n && s[j + 6] == '\\' && s[j + 7] == 'u' ? hex4(s + j + 8) : -1;
        if (low >= 0xDC00 && low <= 0xDFFF)
            width = 12;
        else
            lone = true; /* json-c would store U+FFFD in its place */
    }
    if (lone && out->lone_surrogate == NONE)
        out->lone_surrogate = j;
    return width;
}

/* The end of the string whose opening quote is at s[i]: the offset of its closing quote
 * (n when it has none). Escapes are stepped over; each \u escape is shown to found, when
 * given. */
static size_t string_end(const char *s, size_t n, size_t i, scan_result *found)
{
    scan_result ignored;
    size_t j = i + 1;
    while (j < n && s[j] != '"') {
        if (s[j] != '\\')
            j++;
        else if (j + 5 < n && s[j + 1] == 'u')
            j += scan_u_escape(s, n, j, found != NULL ? found : &ignored);
        else
            j += 2; /* the escaped character, a quote included */
    }
    return j;
}

/* Whether the string that ends at s[j] (its closing quote) is a key: a ':' follows it. */
static bool is_key(const char *s, size_t n, size_t j)
{
    size_t k = j + 1;
    while (k < n && is_space(s[k]))
        k++;
    return k < n && s[k] == ':';
}

/* One pass over the raw text, outside json-c: finds escaped NULs and lone surrogates
 * anywhere, single quotes outside strings, and counts the keys of the top-level object
 * (a string at depth 1 followed by ':'). Only meaningful for text json-c then accepts; on
 * other text its answers do not matter. */
static void scan(const char *s, size_t n, scan_result *out)
{
    int depth = 0;
    memset(out, 0, sizeof *out);
    out->nul_escape = out->lone_surrogate = NONE;
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
            size_t j = string_end(s, n, i, out);
            if (depth == 1 && is_key(s, n, j))
                out->top_keys++;
            i = j;
        }
    }
}

/* A key of the top-level object, the raw string s[start..end] (both quotes included), as
 * json-c decodes it: a string object the caller puts, or NULL. */
static json_object *decoded_key(const char *s, size_t start, size_t end)
{
    json_tokener *tok = json_tokener_new();
    if (tok == NULL)
        return NULL;
    json_object *key = json_tokener_parse_ex(tok, s + start, (int)(end - start + 1));
    json_tokener_free(tok);
    if (!json_object_is_type(key, json_type_string)) {
        json_object_put(key);
        return NULL;
    }
    return key;
}

/* That key into param (copy_name; a NUL inside it ends it); false when it could not be
 * decoded. */
static bool decode_key(const char *s, size_t start, size_t end, char *param, size_t size)
{
    json_object *key = decoded_key(s, start, end);
    param[0] = '\0';
    if (key == NULL)
        return false;
    copy_name(param, size, json_object_get_string(key));
    json_object_put(key);
    return true;
}

/* Calls visit for each key of the top-level object in text order, with its raw span,
 * until visit returns true; returns whether one did. For the error paths only: the
 * field at fault is named by walking the text again. */
typedef bool (*key_visit)(const char *s, size_t start, size_t end, void *arg);

static bool each_top_key(const char *s, size_t n, key_visit visit, void *arg)
{
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '"') {
            size_t j = string_end(s, n, i, NULL);
            if (depth == 1 && j < n && is_key(s, n, j) && visit(s, i, j, arg))
                return true;
            i = j;
        }
    }
    return false;
}

/* The field whose key or value holds the offset pos: the last top-level key that starts
 * before pos (a value follows its key). */
typedef struct {
    size_t pos;
    size_t start, end; /* the span of that key; start NONE: none yet */
} field_search;

static bool visit_until(const char *s, size_t start, size_t end, void *arg)
{
    (void)s;
    field_search *f = arg;
    if (start > f->pos)
        return true;
    f->start = start;
    f->end = end;
    return false;
}

/* Whether that field was found (always, for a body json-c accepted), its name in param. */
static bool field_at(const char *s, size_t n, size_t pos, char *param, size_t size)
{
    field_search f = {pos, NONE, 0};
    each_top_key(s, n, visit_until, &f);
    param[0] = '\0';
    return f.start != NONE && decode_key(s, f.start, f.end, param, size);
}

/* The first key given a second time, decoded ("url" and "\u0075rl" are one field) and
 * compared whole (two long names alike in their first 64 bytes are two fields). The NULs
 * were refused before: a key is a C string here. */
typedef struct {
    json_object *seen; /* a set of the keys before */
    char *param;
    size_t size;
} duplicate_search;

static bool visit_seen(const char *s, size_t start, size_t end, void *arg)
{
    duplicate_search *d = arg;
    json_object *key = decoded_key(s, start, end);
    if (key == NULL)
        return false;
    const char *name = json_object_get_string(key);
    bool again = json_object_object_get_ex(d->seen, name, NULL);
    if (again)
        copy_name(d->param, d->size, name);
    else
        json_object_object_add(d->seen, name, NULL);
    json_object_put(key);
    return again;
}

/* Whether it was found (always, when json-c kept fewer keys than the text holds). */
static bool first_duplicate(const char *s, size_t n, char *param, size_t size)
{
    duplicate_search d = {json_object_new_object(), param, size};
    param[0] = '\0';
    bool found = d.seen != NULL && each_top_key(s, n, visit_seen, &d);
    json_object_put(d.seen);
    return found;
}

bool json_body_parse(const char *data, size_t len, const char *const *fields, json_object **out,
                     json_body_error *err)
{
    *out = NULL;
    if (!utf8_valid(data, len))
        return fail(err, "body_invalid_json", NULL, "the body is not valid UTF-8", "");

    json_tokener *tok = json_tokener_new_ex(JSON_BODY_MAX_DEPTH);
    if (tok == NULL)
        return fail(err, "body_invalid_json", NULL, "the body could not be parsed", "");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *obj = json_tokener_parse_ex(tok, data, (int)len);
    bool parsed = json_tokener_get_error(tok) == json_tokener_success;
    size_t end = parsed ? json_tokener_get_parse_end(tok) : 0;
    json_tokener_free(tok);
    while (parsed && end < len && is_space(data[end]))
        end++; /* white space may follow the object; data need not be NUL-terminated */
    if (!parsed || end != len || !json_object_is_type(obj, json_type_object)) {
        json_object_put(obj);
        return fail(err, "body_invalid_json", NULL, "the body must be one JSON object", "");
    }

    scan_result found;
    scan(data, len, &found);
    if (found.single_quote) {
        json_object_put(obj);
        return fail(err, "body_invalid_json", NULL, "the body must be one JSON object", "");
    }
    if (found.nul_escape != NONE) {
        json_object_put(obj);
        bool named = field_at(data, len, found.nul_escape, err->param, sizeof err->param);
        return fail(err, "parameter_invalid", named ? err->param : NULL, named ? "" : "a field",
                    " must not contain NUL characters");
    }
    if (found.lone_surrogate != NONE) {
        json_object_put(obj);
        bool named = field_at(data, len, found.lone_surrogate, err->param, sizeof err->param);
        return fail(err, "parameter_invalid", named ? err->param : NULL, named ? "" : "a field",
                    " must not contain a lone surrogate (\\uD800-\\uDFFF not in a pair)");
    }
    if (found.top_keys != (size_t)json_object_object_length(obj)) {
        json_object_put(obj);
        bool named = first_duplicate(data, len, err->param, sizeof err->param);
        return fail(err, "parameter_duplicated", named ? err->param : NULL, named ? "" : "a field",
                    " is given more than once");
    }
    json_object_object_foreach(obj, key, value)
    {
        (void)value;
        bool known = false;
        for (int i = 0; fields[i] != NULL && !known; i++)
            known = strcmp(fields[i], key) == 0;
        if (!known) {
            fail(err, "parameter_unknown", key, "the body has an unknown field: ", "");
            json_object_put(obj);
            return false;
        }
    }
    *out = obj;
    return true;
}
