/* print_table: how list commands print their rows (admin.h). Text for people and shell
 * tools (a header row names the columns, so `cut -f` users can see what they cut), JSON
 * for programs (one document, values typed, so nothing has to parse "-" or split
 * commas). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "admin.h"

/* Type OIDs of the columns the commands return (pg_type.dat; stable across versions). */
#define OID_BOOL 16
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_JSON 114
#define OID_JSONB 3802

static json_object *json_value(const db_result *res, int row, int col)
{
    if (db_null(res, row, col))
        return NULL;
    const char *text = db_text(res, row, col);
    switch (db_column_type(res, col)) {
    case OID_BOOL:
        return json_object_new_boolean(text[0] == 't');
    case OID_INT2:
    case OID_INT4:
    case OID_INT8:
        return json_object_new_int64(strtoll(text, NULL, 10));
    case OID_JSON:
    case OID_JSONB:
        return json_tokener_parse(text);
    default:
        return json_object_new_string(text);
    }
}

static void print_json(const db_result *res, int nrows)
{
    json_object *rows = json_object_new_array();
    for (int i = 0; i < nrows; i++) {
        json_object *row = json_object_new_object();
        for (int col = 0; col < db_columns(res); col++)
            json_object_object_add(row, db_column_name(res, col), json_value(res, i, col));
        json_object_array_add(rows, row);
    }
    puts(json_object_to_json_string_ext(rows, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                  JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(rows);
}

/* A json array of strings as "a,b,c"; any other json as its text. */
static void print_json_cell(const char *text)
{
    json_object *v = json_tokener_parse(text);
    bool strings = v != NULL && json_object_is_type(v, json_type_array);
    for (size_t i = 0; strings && i < json_object_array_length(v); i++)
        strings = json_object_is_type(json_object_array_get_idx(v, i), json_type_string);
    if (!strings) {
        fputs(text, stdout);
    } else {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            printf("%s%s", i > 0 ? "," : "",
                   json_object_get_string(json_object_array_get_idx(v, i)));
    }
    json_object_put(v);
}

static void print_text(const db_result *res, int nrows)
{
    for (int col = 0; col < db_columns(res); col++)
        printf("%s%s", col > 0 ? "\t" : "", db_column_name(res, col));
    putchar('\n');
    for (int i = 0; i < nrows; i++) {
        for (int col = 0; col < db_columns(res); col++) {
            if (col > 0)
                putchar('\t');
            unsigned type = db_column_type(res, col);
            if (db_null(res, i, col))
                putchar('-');
            else if (type == OID_JSON || type == OID_JSONB)
                print_json_cell(db_text(res, i, col));
            else
                fputs(db_text(res, i, col), stdout);
        }
        putchar('\n');
    }
}

void print_table_rows(const db_result *res, bool as_json, int nrows)
{
    if (as_json)
        print_json(res, nrows);
    else
        print_text(res, nrows);
}

void print_table(const db_result *res, bool as_json)
{
    print_table_rows(res, as_json, db_rows(res));
}
