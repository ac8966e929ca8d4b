/* json_body_parse: the strict request-body layer over json-c. */
#include <stdio.h>
#include <string.h>

#include "json_body.h"
#include "unit.h"

static const char *const fields[] = {"url", "events", "description", NULL};

/* Parses text; returns the error code ("ok" on success) and frees the object. */
static const char *parse(const char *text, json_body_error *err)
{
    json_object *obj = NULL;
    bool ok = json_body_parse(text, strlen(text), fields, &obj, err);
    if (ok) {
        ck_assert_ptr_nonnull(obj);
        json_object_put(obj);
        return "ok";
    }
    ck_assert_ptr_null(obj);
    return err->code;
}

START_TEST(accepts_known_fields)
{
    json_body_error err;
    ck_assert_str_eq(parse("{\"url\":\"https://a.example\",\"events\":[\"sale.completed\"]}", &err),
                     "ok");
    ck_assert_str_eq(parse("  {}\n", &err), "ok");
    ck_assert_str_eq(parse("{\"description\":\"a \\\"quoted\\\" \\\\u0000 text\"}", &err), "ok");
}
END_TEST

START_TEST(rejects_non_objects)
{
    json_body_error err;
    ck_assert_str_eq(parse("[]", &err), "body_invalid_json");
    ck_assert_str_eq(parse("\"url\"", &err), "body_invalid_json");
    ck_assert_str_eq(parse("{\"url\":1} {}", &err), "body_invalid_json");
    ck_assert_str_eq(parse("{\"url\":1,}", &err), "body_invalid_json");
    ck_assert_str_eq(parse("{'url':1}", &err), "body_invalid_json");
    ck_assert_str_eq(parse("{\"url\":\"\xC3\x28\"}", &err), "body_invalid_json");
    ck_assert_str_eq(parse("", &err), "body_invalid_json");
}
END_TEST

START_TEST(rejects_unknown_field_naming_it)
{
    json_body_error err;
    ck_assert_str_eq(parse("{\"url\":\"x\",\"extra\":1}", &err), "parameter_unknown");
    ck_assert_str_eq(err.param, "extra");
    ck_assert_str_eq(err.message, "the body has an unknown field: extra");
    ck_assert(err.named);
    ck_assert_str_eq(parse("[]", &err), "body_invalid_json");
    ck_assert(!err.named); /* the body as a whole */
    ck_assert_str_eq(err.param, "");
    /* A field of empty name is one field: named, by "". */
    ck_assert_str_eq(parse("{\"\":1}", &err), "parameter_unknown");
    ck_assert(err.named);
    ck_assert_str_eq(err.param, "");
    ck_assert_str_eq(err.message, "the body has an unknown field: a field with an empty name");
}
END_TEST

/* A long name is cut to 64 bytes between two characters: the error is a JSON string,
 * and half a character would make it invalid UTF-8. */
START_TEST(cuts_long_names_between_characters)
{
    json_body_error err;
    char text[512], want[65];
    /* 30 euro signs (3 bytes each): 21 whole ones fit in 64 bytes. */
    char euros[91];
    for (int i = 0; i < 30; i++)
        memcpy(euros + 3 * i, "\xE2\x82\xAC", 3);
    euros[90] = '\0';
    snprintf(text, sizeof text, "{\"%s\":1}", euros);
    ck_assert_str_eq(parse(text, &err), "parameter_unknown");
    snprintf(want, sizeof want, "%.63s", euros); /* 21 euro signs */
    ck_assert_str_eq(err.param, want);
    /* The same when the name comes from the text again (a NUL in its value). */
    snprintf(text, sizeof text, "{\"%s\":\"\\u0000\"}", euros);
    ck_assert_str_eq(parse(text, &err), "parameter_invalid");
    ck_assert_str_eq(err.param, want);
    /* ASCII: exactly 64 bytes. */
    memset(want, 'k', 64);
    want[64] = '\0';
    snprintf(text, sizeof text, "{\"%s%s\":1}", want, "kkkk");
    ck_assert_str_eq(parse(text, &err), "parameter_unknown");
    ck_assert_str_eq(err.param, want);
}
END_TEST

START_TEST(rejects_duplicate_field)
{
    json_body_error err;
    ck_assert_str_eq(parse("{\"url\":\"a\",\"url\":\"b\"}", &err), "parameter_duplicated");
    ck_assert_str_eq(err.param, "url");
    ck_assert_str_eq(err.message, "url is given more than once");
    ck_assert_str_eq(parse("{\"url\" : \"a\", \"u\\u0072l\":\"b\"}", &err), "parameter_duplicated");
    ck_assert_str_eq(err.param, "url");
    /* The first field given twice, after others and nested values with keys of its name. */
    ck_assert_str_eq(parse("{\"events\":[{\"description\":1}],\"description\":\"a\","
                           "\"url\":\"b\",\"description\":\"c\",\"url\":\"d\"}",
                           &err),
                     "parameter_duplicated");
    ck_assert_str_eq(err.param, "description");
    /* An unknown field given twice is a duplicate first. */
    ck_assert_str_eq(parse("{\"x\":1,\"x\":2}", &err), "parameter_duplicated");
    ck_assert_str_eq(err.param, "x");
    /* Two long names alike in their first 64 bytes are two fields; the one given twice is
     * the duplicate (named by its first 64 bytes). */
    char text[600], a[80], b[80];
    memset(a, 'k', 70);
    snprintf(a + 70, sizeof a - 70, "a");
    memset(b, 'k', 70);
    snprintf(b + 70, sizeof b - 70, "b");
    snprintf(text, sizeof text, "{\"%s\":1,\"%s\":2,\"url\":1,\"url\":2}", a, b);
    ck_assert_str_eq(parse(text, &err), "parameter_duplicated");
    ck_assert_str_eq(err.param, "url");
    /* Nested keys may repeat across objects; only the top level is the request. */
    ck_assert_str_eq(parse("{\"events\":[{\"a\":1},{\"a\":2}],\"url\":\"a:b\"}", &err), "ok");
}
END_TEST

START_TEST(rejects_escaped_nul)
{
    json_body_error err;
    ck_assert_str_eq(parse("{\"url\\u0000x\":1}", &err), "parameter_invalid");
    ck_assert_str_eq(err.param, "url"); /* the key as json-c sees it, cut at the NUL */
    ck_assert_str_eq(parse("{\"url\":\"https://a.com\\u0000.evil\"}", &err), "parameter_invalid");
    ck_assert_str_eq(err.param, "url");
    ck_assert_str_eq(err.message, "url must not contain NUL characters");
    /* Inside an array of the second field: that field. */
    ck_assert_str_eq(parse("{\"url\":\"a\",\"events\":[\"x\",\"y\\u0000\"]}", &err),
                     "parameter_invalid");
    ck_assert_str_eq(err.param, "events");
    /* A key that is nothing but a NUL: a field of empty name, named "" (it is still the one
     * field at fault). */
    ck_assert_str_eq(parse("{\"\\u0000\":1}", &err), "parameter_invalid");
    ck_assert(err.named);
    ck_assert_str_eq(err.param, "");
    ck_assert_str_eq(err.message, "a field with an empty name must not contain NUL characters");
}
END_TEST

START_TEST(rejects_lone_surrogates_and_keeps_pairs)
{
    json_body_error err;
    ck_assert_str_eq(parse("{\"description\":\"a\\ud800b\"}", &err), "parameter_invalid");
    ck_assert_str_eq(err.param, "description");
    ck_assert_str_eq(parse("{\"url\":\"\\ud83d\\ude00\",\"description\":\"\\udc00\"}", &err),
                     "parameter_invalid");
    ck_assert_str_eq(err.param, "description");
    ck_assert_str_eq(parse("{\"description\":\"\\uDBFF\"}", &err), "parameter_invalid");
    ck_assert_str_eq(parse("{\"description\":\"\\udc00\"}", &err), "parameter_invalid");
    ck_assert_str_eq(parse("{\"description\":\"\\ud800\\u0041\"}", &err), "parameter_invalid");
    ck_assert_str_eq(parse("{\"description\":\"\\ud800\\ud800\\udc00\"}", &err),
                     "parameter_invalid");
    ck_assert_str_eq(parse("{\"\\ud800x\":1}", &err), "parameter_invalid"); /* in a key too */
    /* A pair is one character (U+1F600 here), in either case; an escaped backslash before
     * "u" is no escape. */
    ck_assert_str_eq(parse("{\"description\":\"\\ud83d\\ude00\"}", &err), "ok");
    ck_assert_str_eq(parse("{\"description\":\"\\uD83D\\uDE00 \\u00e9\"}", &err), "ok");
    ck_assert_str_eq(parse("{\"description\":\"\\\\ud800\"}", &err), "ok");
}
END_TEST

Suite *json_body_suite(void)
{
    Suite *s = suite_create("json_body");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, accepts_known_fields);
    tcase_add_test(tc, rejects_non_objects);
    tcase_add_test(tc, rejects_unknown_field_naming_it);
    tcase_add_test(tc, cuts_long_names_between_characters);
    tcase_add_test(tc, rejects_duplicate_field);
    tcase_add_test(tc, rejects_escaped_nul);
    tcase_add_test(tc, rejects_lone_surrogates_and_keeps_pairs);
    suite_add_tcase(s, tc);
    return s;
}
