/* json_out: writes JSON straight into a buf, once, with commas placed automatically.
 * Responses are built with this rather than with a json-c tree: no per-value
 * allocation, and the bytes go to the client as written. (json-c parses request
 * bodies: json_body.h.) */
#ifndef MARKET_JSON_OUT_H
#define MARKET_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define JW_MAX_DEPTH 32

typedef struct {
    buf *out;
    int depth;
    bool first[JW_MAX_DEPTH]; /* no value written yet at this depth */
    bool after_key;           /* the next value follows a key: no comma */
} json_writer;

void jw_init(json_writer *j, buf *out);
void jw_object_begin(json_writer *j);
void jw_object_end(json_writer *j);
void jw_array_begin(json_writer *j);
void jw_array_end(json_writer *j);
void jw_key(json_writer *j, const char *key);
void jw_string(json_writer *j, const char *s); /* NULL writes null */
void jw_string_n(json_writer *j, const char *s, size_t n);
void jw_int(json_writer *j, long long v);
void jw_bool(json_writer *j, bool v);
void jw_null(json_writer *j);
void jw_raw(json_writer *j, const char *json); /* an already valid JSON value */
/* Members of the object being written, already JSON ("a":1,"b":"x", n bytes, no braces):
 * written after the members before them, as jw_key and a value would be. */
void jw_members(json_writer *j, const char *members, size_t n);
void jw_money(json_writer *j, int64_t minor, int exponent);

/* Shorthands for "key": value. */
void jw_kv_string(json_writer *j, const char *key, const char *s);
void jw_kv_int(json_writer *j, const char *key, long long v);
void jw_kv_bool(json_writer *j, const char *key, bool v);
void jw_kv_null(json_writer *j, const char *key);
void jw_kv_raw(json_writer *j, const char *key, const char *json);
void jw_kv_money(json_writer *j, const char *key, int64_t minor, int exponent);

/* Appends s as a JSON string literal (quotes included) to b. */
void json_escape(buf *b, const char *s, size_t n);

#endif
