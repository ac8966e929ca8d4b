/* json_body: strict parsing of a request body that must be one JSON object.
 *
 * json-c does the parsing; this layer adds what the API promises on top of it: UTF-8
 * only, nothing after the object but white space, no field outside the route's list, no
 * field given twice (json-c would silently keep the last), and no escaped NUL (\u0000)
 * anywhere, because json-c cuts keys and C strings at a NUL, so "url\u0000x" would
 * otherwise pass as "url". Every fault of one field names it (docs/contract.md section
 * 4): a NUL or lone surrogate in its key or anywhere in its value, its second occurrence.
 * Pure, so it is unit-tested and fuzzed. */
#ifndef MARKET_JSON_BODY_H
#define MARKET_JSON_BODY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define JSON_BODY_MAX_DEPTH 16

typedef struct {
    const char *code; /* body_invalid_json, parameter_invalid, parameter_unknown,
                         parameter_duplicated */
    /* Whether one field is at fault; then param is its name, cut to at most 64 bytes
     * between two characters, "" for a field whose name is empty (or only a NUL). Not
     * named: the body as a whole (body_invalid_json), and param is "". */
    bool named;
    char param[65];
    char message[160]; /* for people, naming the field when there is one */
} json_body_error;

/* Parses data[0..len). On success *out is a new object the caller must json_object_put.
 * On failure *out is NULL and err says why. */
bool json_body_parse(const char *data, size_t len, const char *const *fields, json_object **out,
                     json_body_error *err);

#endif
