/* input: a program's declared inputs, validated and converted into typed values.
 *
 * In the spirit of kcgi's struct kvalid, every input a route takes, query parameter or
 * JSON body field, is declared once in a table: its name, its type with that type's
 * bounds, and where its typed value goes in the program's input struct. One linear pass
 * over the table checks what app/api/http/query or app/api/http/json_body found and writes every
 * declared value, its default when it was not given, so that handlers read typed values only and
 * never parse a string again. The first fault is reported in the table's order, which is
 * the order a request with several faults learns about them, with the code, the input at
 * fault and the message for people the program answers with. Pure: no allocation but
 * from the caller's arena (the decoded query, and a URL when one is given). */
#ifndef MARKET_INPUT_H
#define MARKET_INPUT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

/* The value types, with the C type each writes at its spec's offset. */
typedef enum {
    INPUT_TEXT,      /* const char *: any value (a cursor, decoded by its reader); NULL absent */
    INPUT_STRING,    /* const char *: min..max characters, no control characters; NULL absent */
    INPUT_INT,       /* long: min..max; query: decimal digits, no sign or leading zero; body: a
                        JSON integer; def when absent */
    INPUT_ENUM,      /* int: the index of the value in values; def when absent */
    INPUT_ENUM_SET,  /* unsigned: body only, a non-empty JSON array of values, bit i for
                        values[i] (duplicates dropped); def when absent */
    INPUT_SLUG,      /* const char *: a category slug (lib/ids.h); NULL absent */
    INPUT_HANDLE,    /* const char *: a seller handle (lib/ids.h); NULL absent */
    INPUT_DECIMAL,   /* input_decimal: a non-negative decimal such as 19.99; text NULL absent */
    INPUT_TIMESTAMP, /* input_time: an RFC 3339 date-time; text NULL absent */
    INPUT_BOOL,      /* int: body, a JSON boolean; query, true or false; -1 absent */
    INPUT_URL,       /* const url_parts *: an absolute https URL (lib/url.h); NULL absent */
} input_type;

/* A decimal exactly: units and 10^-12 parts of a unit, the most either side of the dot may
 * hold (decimal_valid, lib/money.h). A price filter compares prices in each product's own
 * currency, whose exponent it does not know: no scale is chosen for it. */
#define INPUT_DECIMAL_SCALE 1000000000000LL
typedef struct {
    const char *text; /* as given */
    int64_t units;
    int64_t fraction; /* 0 .. INPUT_DECIMAL_SCALE - 1 */
} input_decimal;

/* A date-time: the instant it names, and the text as given. */
typedef struct {
    const char *text;
    int64_t seconds; /* since 1970-01-01T00:00:00Z */
    int32_t micros;
} input_time;

/* One declared input; a table ends with an entry whose name is NULL. */
typedef struct {
    const char *name;
    input_type type;
    size_t offset;             /* where its typed value goes in the output struct */
    long min, max;             /* INT: the range; STRING: characters */
    long def;                  /* INT, ENUM, ENUM_SET: the value when not given */
    const char *const *values; /* ENUM, ENUM_SET: the values, NULL-terminated */
    bool required;             /* absent: parameter_missing "NAME is required" */
    const char *expects;       /* the message of a value refused */
    /* A second message where a type refuses for a second reason: STRING, a control
     * character ("NAME must not contain control characters" when NULL: expects); ENUM_SET,
     * an element that is not a value, after "NAME[i] ". */
    const char *detail;
} input_spec;

typedef struct {
    const char *code;  /* parameter_invalid, parameter_unknown, parameter_duplicated,
                          parameter_missing, url_not_https */
    const char *param; /* the input at fault, or NULL */
    char message[256];
} input_error;

/* Reads the query string qs against specs (at most QUERY_MAX_PARAMS - 1 of them, no
 * ENUM_SET) into out: the faults of app/api/http/query first (an unknown, repeated, malformed or
 * over-long parameter, in the query's order), then each value in the table's order. */
bool input_read_query(arena *a, const char *qs, const input_spec *specs, void *out,
                      input_error *err);

/* Reads the fields of body (a JSON object from json_body_parse, or NULL for no body)
 * against specs into out, in the table's order. */
bool input_read_body(arena *a, json_object *body, const input_spec *specs, void *out,
                     input_error *err);

/* Compares two decimals by value: <0, 0 or >0. */
int input_decimal_cmp(const input_decimal *x, const input_decimal *y);

#endif
