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

/* One pass over the raw text, outside json-c: finds escaped NULs anywhere, single quotes
 * outside strings, and counts the
 * keys of the top-level object (a string at depth 1 followed by ':'). Only meaningful
 * for text json-c then accepts; on other text its answers do not matter. */
static void scan(const char *s, size_t n, bool *nul_escape, bool *single_quote, size_t *top_keys)
{
    int depth = 0;
    *nul_escape = false;
    *single_quote = false;
    *top_keys = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\'') {
            *single_quote = true; /* json-c takes 'strings' even in strict mode; JSON does not */
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '"') {
            size_t j = i + 1;
            for (; j < n && s[j] != '"'; j++) {
                if (s[j] != '\\')
                    continue;
                if (j + 5 < n && s[j + 1] == 'u' && memcmp(s + j + 2, "0000", 4) == 0)
                    *nul_escape = true;
                j++; /* skip the escaped character, a quote included */
            }
            size_t k = j + 1;
            while (k < n && is_space(s[k]))
                k++;
            if (depth == 1 && k < n && s[k] == ':')
                (*top_keys)++;
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

    bool nul_escape, single_quote;
    size_t top_keys;
    scan(data, len, &nul_escape, &single_quote, &top_keys);
    if (single_quote) {
        json_object_put(obj);
        return fail(err, "body_invalid_json", NULL, "the body must be one JSON object");
    }
    if (nul_escape) {
        json_object_put(obj);
        return fail(err, "parameter_invalid", NULL, "the body must not contain NUL characters");
    }
    if (top_keys != (size_t)json_object_object_length(obj)) {
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
