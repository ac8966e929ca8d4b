/* input: declared inputs read into typed values (app/api/http/input.h): each type's accepted and
 * refused edges, defaults, the order faults are reported in, and the messages. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "input.h"
#include "json_body.h"
#include "unit.h"
#include "url.h"

typedef struct {
    long limit, seconds;
    const char *cursor, *q, *category, *seller, *description;
    input_decimal min, max;
    input_time from;
    int sort, flag;
    unsigned kinds;
    const url_parts *url;
} values;

static const char *const sorts[] = {"newest", "price_asc", NULL};
static const char *const kinds[] = {"a.one", "b.two", "c.three", NULL};

static const input_spec query[] = {
    {.name = "category",
     .type = INPUT_SLUG,
     .offset = offsetof(values, category),
     .expects = "category bad"},
    {.name = "q",
     .type = INPUT_STRING,
     .offset = offsetof(values, q),
     .min = 1,
     .max = 5,
     .expects = "q bad"},
    {.name = "seller",
     .type = INPUT_HANDLE,
     .offset = offsetof(values, seller),
     .expects = "seller bad"},
    {.name = "min", .type = INPUT_DECIMAL, .offset = offsetof(values, min), .expects = "min bad"},
    {.name = "max", .type = INPUT_DECIMAL, .offset = offsetof(values, max), .expects = "max bad"},
    {.name = "sort",
     .type = INPUT_ENUM,
     .offset = offsetof(values, sort),
     .values = sorts,
     .def = -1,
     .expects = "sort bad"},
    {.name = "from",
     .type = INPUT_TIMESTAMP,
     .offset = offsetof(values, from),
     .expects = "from bad"},
    {.name = "flag", .type = INPUT_BOOL, .offset = offsetof(values, flag), .expects = "flag bad"},
    {.name = "limit",
     .type = INPUT_INT,
     .offset = offsetof(values, limit),
     .min = 1,
     .max = 100,
     .def = 20,
     .expects = "limit must be an integer from 1 to 100"},
    {.name = "cursor", .type = INPUT_TEXT, .offset = offsetof(values, cursor)},
    {.name = NULL},
};

static const input_spec body[] = {
    {.name = "url", .type = INPUT_URL, .offset = offsetof(values, url), .required = true},
    {.name = "kinds",
     .type = INPUT_ENUM_SET,
     .offset = offsetof(values, kinds),
     .values = kinds,
     .def = 7,
     .expects = "kinds must be a non-empty array",
     .detail = "is not a kind"},
    {.name = "description",
     .type = INPUT_STRING,
     .offset = offsetof(values, description),
     .min = 0,
     .max = 3,
     .expects = "description too long",
     .detail = "description must not contain control characters"},
    {.name = "flag",
     .type = INPUT_BOOL,
     .offset = offsetof(values, flag),
     .expects = "flag must be true or false"},
    {.name = "seconds",
     .type = INPUT_INT,
     .offset = offsetof(values, seconds),
     .min = 0,
     .max = 604800,
     .def = 86400,
     .expects = "seconds out of range"},
    {.name = NULL},
};

static arena a;
static values v;
static input_error err;
static json_object *held; /* the last body read: its strings are the values' */

static void setup(void)
{
    arena_init(&a, 4096);
    memset(&v, 0x5a, sizeof v); /* every declared value must be written */
    memset(&err, 0, sizeof err);
}

static void teardown(void)
{
    json_object_put(held);
    held = NULL;
    arena_free(&a);
}

static bool q(const char *qs)
{
    memset(&v, 0x5a, sizeof v);
    return input_read_query(&a, qs, query, &v, &err);
}

/* Refused with code, param and message. */
static void refused(const char *qs, const char *code, const char *param, const char *message)
{
    ck_assert_msg(!q(qs), "accepted %s", qs);
    ck_assert_str_eq(err.code, code);
    if (param == NULL)
        ck_assert_ptr_null(err.param);
    else
        ck_assert_str_eq(err.param, param);
    ck_assert_str_eq(err.message, message);
}

START_TEST(defaults_when_absent)
{
    ck_assert(q(""));
    ck_assert_int_eq(v.limit, 20);
    ck_assert_int_eq(v.sort, -1);
    ck_assert_int_eq(v.flag, -1);
    ck_assert_ptr_null(v.cursor);
    ck_assert_ptr_null(v.q);
    ck_assert_ptr_null(v.category);
    ck_assert_ptr_null(v.seller);
    ck_assert_ptr_null(v.min.text);
    ck_assert_ptr_null(v.from.text);
}
END_TEST

START_TEST(integers)
{
    static const char *const good[] = {"1", "9", "10", "20", "99", "100"};
    static const long as[] = {1, 9, 10, 20, 99, 100};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char qs[32];
        snprintf(qs, sizeof qs, "limit=%s", good[i]);
        ck_assert_msg(q(qs), "refused %s", good[i]);
        ck_assert_int_eq(v.limit, as[i]);
    }
    static const char *const bad[] = {"",
                                      "0",
                                      "00",
                                      "01",
                                      "020",
                                      "101",
                                      "999",
                                      "1000",
                                      "-1",
                                      "%2B5",
                                      "%205",
                                      "5%20",
                                      "5x",
                                      "1e2",
                                      "0x10",
                                      "%C2%BD",
                                      "9999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char qs[64];
        snprintf(qs, sizeof qs, "limit=%s", bad[i]);
        refused(qs, "parameter_invalid", "limit", "limit must be an integer from 1 to 100");
    }
}
END_TEST

START_TEST(strings_count_characters)
{
    ck_assert(q("q=%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC")); /* 5 euro signs */
    ck_assert_str_eq(v.q, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
    ck_assert(q("q=caf%C3%A9+"));
    ck_assert_str_eq(v.q, "caf\xc3\xa9 ");
    refused("q=", "parameter_invalid", "q", "q bad");
    refused("q=abcdef", "parameter_invalid", "q", "q bad");
    refused("q=a%09b", "parameter_invalid", "q", "q bad"); /* no detail: expects */
    refused("q=a%7F", "parameter_invalid", "q", "q bad");
    refused("q=a%C2%85", "parameter_invalid", "q", "q bad");
}
END_TEST

START_TEST(slugs_handles_enums_text)
{
    ck_assert(q("category=fonts&seller=pixel-forge_1&sort=price_asc&cursor=any%20thing"));
    ck_assert_str_eq(v.category, "fonts");
    ck_assert_str_eq(v.seller, "pixel-forge_1");
    ck_assert_int_eq(v.sort, 1);
    ck_assert_str_eq(v.cursor, "any thing");
    ck_assert(q("sort=newest"));
    ck_assert_int_eq(v.sort, 0);
    refused("category=Fonts", "parameter_invalid", "category", "category bad");
    refused("category=", "parameter_invalid", "category", "category bad");
    refused("seller=pixel+forge", "parameter_invalid", "seller", "seller bad");
    refused("sort=NEWEST", "parameter_invalid", "sort", "sort bad");
    refused("sort=newest%20", "parameter_invalid", "sort", "sort bad");
    refused("sort=", "parameter_invalid", "sort", "sort bad");
}
END_TEST

START_TEST(decimals)
{
    ck_assert(q("min=19.99&max=0"));
    ck_assert_str_eq(v.min.text, "19.99");
    ck_assert_int_eq(v.min.units, 19);
    ck_assert_int_eq(v.min.fraction, 990000000000LL);
    ck_assert_int_eq(v.max.units, 0);
    ck_assert_int_eq(v.max.fraction, 0);
    ck_assert_int_gt(input_decimal_cmp(&v.min, &v.max), 0);
    ck_assert(q("min=999999999999.999999999999&max=000000000001"));
    ck_assert_int_eq(v.min.units, 999999999999LL);
    ck_assert_int_eq(v.min.fraction, INPUT_DECIMAL_SCALE - 1);
    ck_assert_int_eq(v.max.units, 1);
    ck_assert_int_gt(input_decimal_cmp(&v.min, &v.max), 0);
    ck_assert(q("min=5.10&max=5.1"));
    ck_assert_int_eq(input_decimal_cmp(&v.min, &v.max), 0);
    ck_assert(q("min=5.09&max=5.1"));
    ck_assert_int_lt(input_decimal_cmp(&v.min, &v.max), 0);
    static const char *const bad[] = {
        "-1", "1,5", "", "1.", ".5", "1e2", "1.2.3", "1234567890123", "1.1234567890123", "%2B1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char qs[64];
        snprintf(qs, sizeof qs, "min=%s", bad[i]);
        refused(qs, "parameter_invalid", "min", "min bad");
    }
}
END_TEST

/* The instant of a date-time, against values computed with date(1). */
static void instant(const char *text, long long seconds, int micros)
{
    char qs[64];
    snprintf(qs, sizeof qs, "from=%s", text);
    ck_assert_msg(q(qs), "refused %s", text);
    ck_assert_str_eq(v.from.text, text);
    ck_assert_msg(v.from.seconds == seconds, "%s: %lld", text, (long long)v.from.seconds);
    ck_assert_int_eq(v.from.micros, micros);
}

START_TEST(timestamps)
{
    instant("1970-01-01T00:00:00Z", 0, 0);
    instant("2026-11-26T10:04:05Z", 1795687445, 0);
    instant("2026-11-26t10:04:05.5z", 1795687445, 500000);
    instant("2026-11-26T10:04:05.000123Z", 1795687445, 123);
    instant("2026-11-26T11:04:05-00:00", 1795691045, 0);
    instant("2026-11-26T11:34:05-01:30", 1795698245, 0);
    instant("2026-11-26T11:04:05-23:59", 1795777385, 0);
    instant("2024-02-29T00:00:00Z", 1709164800, 0);
    instant("1969-12-31T23:59:59Z", -1, 0);
    instant("0001-01-01T00:00:00Z", -62135596800LL, 0);
    instant("9999-12-31T23:59:59.999999Z", 253402300799LL, 999999);
    static const char *const bad[] = {
        "2026-11-26",
        "2026-11-26T10:04:05",
        "2026-11-26%2010:04:05Z",
        "2026-11-26T10:04Z",
        "2026-11-26T10:04:05.Z",
        "2026-11-26T10:04:05.1234567Z",
        "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-11-26T24:00:00Z",
        "2026-11-26T23:59:60Z",
        "2026-11-26T10:04:05%2B24:00",
        "2026-11-26T10:04:05Zx",
        "now",
        "infinity",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char qs[64];
        snprintf(qs, sizeof qs, "from=%s", bad[i]);
        refused(qs, "parameter_invalid", "from", "from bad");
    }
}
END_TEST

START_TEST(query_faults_and_their_order)
{
    refused("nope=1", "parameter_unknown", "nope", "unknown query parameter nope");
    refused("=1", "parameter_unknown", "", "unknown query parameter (empty name)");
    char long_name[80];
    memset(long_name, 'x', 65);
    memcpy(long_name + 65, "=1", sizeof "=1");
    ck_assert(!q(long_name));
    ck_assert_str_eq(err.code, "parameter_unknown");
    ck_assert_uint_eq(strlen(err.param), 64); /* over 64: cut, in param and the message */
    ck_assert_uint_eq(strlen(err.message), strlen("unknown query parameter  (cut)") + 64);
    /* Cut between characters: 63 x then a 2-byte character, which does not fit. */
    memset(long_name, 'x', 63);
    memcpy(long_name + 63, "\xC3\xA9=1", sizeof "\xC3\xA9=1");
    ck_assert(!q(long_name));
    ck_assert_uint_eq(strlen(err.param), 63);
    refused("limit=1&limit=2", "parameter_duplicated", "limit", "limit is given more than once");
    refused("q=%ZZ", "parameter_invalid", "q", "q is not valid percent-encoded UTF-8");
    refused("q=%00", "parameter_invalid", "q", "q is not valid percent-encoded UTF-8");
    refused("%FF=1", "parameter_invalid", "%FF",
            "the query parameter name %FF is not valid percent-encoded UTF-8");
    /* As sent, every byte outside printable ASCII written %XX. */
    refused("a\xFF b=1", "parameter_invalid", "a%FF%20b",
            "the query parameter name a%FF%20b is not valid percent-encoded UTF-8");
    /* The query's faults first, whatever the values; then the values in the table's order,
     * whatever the query's. */
    refused("limit=0&nope=1", "parameter_unknown", "nope", "unknown query parameter nope");
    refused("limit=0&sort=x&category=X", "parameter_invalid", "category", "category bad");
    refused("limit=0&sort=x", "parameter_invalid", "sort", "sort bad");
}
END_TEST

static bool b(const char *json)
{
    memset(&v, 0x5a, sizeof v);
    json_object *obj = NULL;
    json_body_error jerr;
    static const char *const fields[] = {"url", "kinds", "description", "flag", "seconds", NULL};
    if (json != NULL)
        ck_assert_msg(json_body_parse(json, strlen(json), fields, &obj, &jerr), "%s", json);
    json_object_put(held);
    held = obj;
    return input_read_body(&a, obj, body, &v, &err);
}

static void body_refused(const char *json, const char *code, const char *param, const char *message)
{
    ck_assert_msg(!b(json), "accepted %s", json);
    ck_assert_str_eq(err.code, code);
    ck_assert_str_eq(err.param, param);
    ck_assert_str_eq(err.message, message);
}

START_TEST(body_fields)
{
    ck_assert(b("{\"url\": \"HTTPS://Example.COM/a\"}"));
    ck_assert_str_eq(v.url->text, "https://example.com/a");
    ck_assert_uint_eq(v.kinds, 7); /* the default */
    ck_assert_ptr_null(v.description);
    ck_assert_int_eq(v.flag, -1);
    ck_assert_int_eq(v.seconds, 86400);
    ck_assert(b("{\"url\": \"https://x.example\", \"kinds\": [\"c.three\", \"a.one\", \"c.three\"],"
                " \"description\": \"\\u00e9t\\u00e9\", \"flag\": false, \"seconds\": 0}"));
    ck_assert_uint_eq(v.kinds, 5);
    ck_assert_str_eq(v.description, "\xc3\xa9t\xc3\xa9");
    ck_assert_int_eq(v.flag, 0);
    ck_assert_int_eq(v.seconds, 0);
    ck_assert(b("{\"url\": \"https://x.example\", \"flag\": true, \"seconds\": 604800}"));
    ck_assert_int_eq(v.flag, 1);
    ck_assert_int_eq(v.seconds, 604800);
}
END_TEST

START_TEST(body_refusals)
{
    body_refused(NULL, "parameter_missing", "url", "url is required");
    body_refused("{}", "parameter_missing", "url", "url is required");
    body_refused("{\"url\": 5}", "parameter_invalid", "url", "url must be a string");
    body_refused("{\"url\": \"http://x.example\"}", "url_not_https", "url", "url must use https");
    ck_assert(!b("{\"url\": \"https://u@x.example\"}"));
    ck_assert_str_eq(err.code, "parameter_invalid");
    ck_assert_str_eq(err.param, "url");
#define U "{\"url\": \"https://x.example\", "
    body_refused(U "\"kinds\": []}", "parameter_invalid", "kinds",
                 "kinds must be a non-empty array");
    body_refused(U "\"kinds\": \"a.one\"}", "parameter_invalid", "kinds",
                 "kinds must be a non-empty array");
    body_refused(U "\"kinds\": [\"a.one\", \"d.four\"]}", "parameter_invalid", "kinds",
                 "kinds[1] is not a kind");
    body_refused(U "\"kinds\": [1]}", "parameter_invalid", "kinds", "kinds[0] is not a kind");
    body_refused(U "\"description\": \"abcd\"}", "parameter_invalid", "description",
                 "description too long");
    body_refused(U "\"description\": 5}", "parameter_invalid", "description",
                 "description too long");
    body_refused(U "\"description\": \"a\\tb\"}", "parameter_invalid", "description",
                 "description must not contain control characters");
    body_refused(U "\"flag\": 1}", "parameter_invalid", "flag", "flag must be true or false");
    body_refused(U "\"flag\": \"true\"}", "parameter_invalid", "flag",
                 "flag must be true or false");
    static const char *const bad_seconds[] = {
        "-1", "604801", "60.0", "\"60\"", "null", "99999999999999999999", "true"};
    for (size_t i = 0; i < sizeof bad_seconds / sizeof bad_seconds[0]; i++) {
        char json[128];
        snprintf(json, sizeof json, U "\"seconds\": %s}", bad_seconds[i]);
        body_refused(json, "parameter_invalid", "seconds", "seconds out of range");
    }
    /* The table's order, not the body's. */
    body_refused("{\"seconds\": -1, \"flag\": 2, \"url\": \"http://x\"}", "url_not_https", "url",
                 "url must use https");
    body_refused(U "\"seconds\": -1, \"flag\": 2}", "parameter_invalid", "flag",
                 "flag must be true or false");
#undef U
}
END_TEST

Suite *input_suite(void)
{
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, defaults_when_absent);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, strings_count_characters);
    tcase_add_test(tc, slugs_handles_enums_text);
    tcase_add_test(tc, decimals);
    tcase_add_test(tc, timestamps);
    tcase_add_test(tc, query_faults_and_their_order);
    tcase_add_test(tc, body_fields);
    tcase_add_test(tc, body_refusals);
    suite_add_tcase(s, tc);
    return s;
}
