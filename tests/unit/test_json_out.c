/* json_out: the streaming JSON writer, checked byte for byte and against json-c. */
#include <json.h>
#include <limits.h>
#include <signal.h>
#include <string.h>

#include "buf.h"
#include "json_out.h"
#include "unit.h"

static buf out;
static json_writer w;

static void setup(void)
{
    buf_init(&out, 64);
    jw_init(&w, &out);
}

static void teardown(void)
{
    buf_free(&out);
}

START_TEST(empty_containers)
{
    jw_array_begin(&w);
    jw_object_begin(&w);
    jw_object_end(&w);
    jw_array_begin(&w);
    jw_array_end(&w);
    jw_array_end(&w);
    ck_assert_str_eq(out.data, "[{},[]]");
}
END_TEST

START_TEST(error_envelope)
{
    jw_object_begin(&w);
    jw_key(&w, "error");
    jw_object_begin(&w);
    jw_kv_string(&w, "type", "invalid_request_error");
    jw_kv_string(&w, "code", "parameter_invalid");
    jw_kv_string(&w, "param", "limit");
    jw_kv_null(&w, "next_cursor");
    jw_object_end(&w);
    jw_object_end(&w);
    ck_assert_str_eq(out.data, "{\"error\":{\"type\":\"invalid_request_error\","
                               "\"code\":\"parameter_invalid\",\"param\":\"limit\","
                               "\"next_cursor\":null}}");
}
END_TEST

START_TEST(members_follow_the_members_before_them)
{
    jw_array_begin(&w);
    jw_object_begin(&w);
    jw_kv_string(&w, "id", "p1");
    const char *members = "\"title\":\"A\",\"price\":5";
    jw_members(&w, members, strlen(members));
    jw_object_end(&w);
    jw_object_begin(&w);
    jw_members(&w, "\"only\":true", strlen("\"only\":true"));
    jw_members(&w, "", 0); /* nothing: no comma either */
    jw_object_end(&w);
    jw_array_end(&w);
    ck_assert_str_eq(out.data, "[{\"id\":\"p1\",\"title\":\"A\",\"price\":5},{\"only\":true}]");
}
END_TEST

START_TEST(scalars_and_commas)
{
    jw_object_begin(&w);
    jw_kv_int(&w, "min", LLONG_MIN);
    jw_kv_int(&w, "zero", 0);
    jw_kv_bool(&w, "t", true);
    jw_kv_bool(&w, "f", false);
    jw_kv_raw(&w, "raw", "[1,2]");
    jw_kv_string(&w, "none", NULL);
    jw_key(&w, "list");
    jw_array_begin(&w);
    jw_int(&w, 1);
    jw_string(&w, "two");
    jw_null(&w);
    jw_bool(&w, true);
    jw_raw(&w, "{}");
    jw_array_end(&w);
    jw_object_end(&w);
    ck_assert_str_eq(out.data, "{\"min\":-9223372036854775808,\"zero\":0,\"t\":true,"
                               "\"f\":false,\"raw\":[1,2],\"none\":null,"
                               "\"list\":[1,\"two\",null,true,{}]}");
}
END_TEST

START_TEST(money_values)
{
    jw_object_begin(&w);
    jw_kv_money(&w, "price", 1999, 2);
    jw_kv_money(&w, "total", 500, 2);
    jw_kv_money(&w, "amount", 120050, 2);
    jw_kv_money(&w, "yen", 5, 0);
    jw_kv_money(&w, "dinar", 1, 3);
    jw_key(&w, "list");
    jw_array_begin(&w);
    jw_money(&w, 0, 2);
    jw_money(&w, 10, 2);
    jw_array_end(&w);
    jw_object_end(&w);
    ck_assert_str_eq(out.data, "{\"price\":19.99,\"total\":5,\"amount\":1200.5,\"yen\":5,"
                               "\"dinar\":0.001,\"list\":[0,0.1]}");
}
END_TEST

static const char *escaped(const char *s, size_t n)
{
    buf_clear(&out);
    json_escape(&out, s, n);
    return out.data;
}

START_TEST(escapes)
{
    ck_assert_str_eq(escaped("", 0), "\"\"");
    ck_assert_str_eq(escaped("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
    ck_assert_str_eq(escaped("\n\r\t", 3), "\"\\n\\r\\t\"");
    ck_assert_str_eq(escaped("\x01\x1f\b\f", 4), "\"\\u0001\\u001f\\u0008\\u000c\"");
    ck_assert_str_eq(escaped("a\0b", 3), "\"a\\u0000b\"");
    ck_assert_str_eq(escaped("/\x7f\xc3\xa9\xe2\x80\xa8", 7), "\"/\x7f\xc3\xa9\xe2\x80\xa8\"");
    ck_assert_str_eq(escaped("</script>", 9), "\"</script>\"");
}
END_TEST

START_TEST(keys_are_escaped)
{
    jw_object_begin(&w);
    jw_kv_string(&w, "a\"b", "v");
    jw_object_end(&w);
    ck_assert_str_eq(out.data, "{\"a\\\"b\":\"v\"}");
}
END_TEST

START_TEST(string_n_takes_length)
{
    jw_array_begin(&w);
    jw_string_n(&w, "abcdef", 3);
    jw_string_n(&w, "", 0);
    jw_array_end(&w);
    ck_assert_str_eq(out.data, "[\"abc\",\"\"]");
}
END_TEST

/* Every string survives a trip through the writer and json-c's parser unchanged. */
START_TEST(strings_round_trip_through_json_c)
{
    char all[200];
    size_t n = 0;
    for (int c = 1; c < 0x80; c++)
        all[n++] = (char)c;
    memcpy(all + n, "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xef\xbf\xbf", 12);
    n += 12;
    all[n] = '\0';

    jw_object_begin(&w);
    jw_kv_string(&w, all, all);
    jw_key(&w, "nested");
    jw_array_begin(&w);
    jw_array_begin(&w);
    jw_string_n(&w, all, n);
    jw_array_end(&w);
    jw_array_end(&w);
    jw_object_end(&w);

    json_object *root = json_tokener_parse(out.data);
    ck_assert_ptr_nonnull(root);
    json_object *value = NULL;
    ck_assert(json_object_object_get_ex(root, all, &value));
    ck_assert_str_eq(json_object_get_string(value), all);
    json_object *nested = NULL;
    ck_assert(json_object_object_get_ex(root, "nested", &nested));
    json_object *inner = json_object_array_get_idx(json_object_array_get_idx(nested, 0), 0);
    ck_assert_uint_eq((size_t)json_object_get_string_len(inner), n);
    ck_assert_mem_eq(json_object_get_string(inner), all, n);
    json_object_put(root);
}
END_TEST

START_TEST(deep_but_legal_nesting)
{
    for (int i = 0; i < JW_MAX_DEPTH - 1; i++)
        jw_array_begin(&w);
    for (int i = 0; i < JW_MAX_DEPTH - 1; i++)
        jw_array_end(&w);
    ck_assert_uint_eq(out.len, 2 * (JW_MAX_DEPTH - 1));
    json_object *root = json_tokener_parse(out.data);
    ck_assert_ptr_nonnull(root);
    json_object_put(root);
}
END_TEST

START_TEST(too_deep_aborts)
{
    for (int i = 0; i < JW_MAX_DEPTH; i++)
        jw_array_begin(&w);
}
END_TEST

Suite *json_out_suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_containers);
    tcase_add_test(tc, error_envelope);
    tcase_add_test(tc, scalars_and_commas);
    tcase_add_test(tc, members_follow_the_members_before_them);
    tcase_add_test(tc, money_values);
    tcase_add_test(tc, escapes);
    tcase_add_test(tc, keys_are_escaped);
    tcase_add_test(tc, string_n_takes_length);
    tcase_add_test(tc, strings_round_trip_through_json_c);
    tcase_add_test(tc, deep_but_legal_nesting);
    if (unit_forking())
        tcase_add_test_raise_signal(tc, too_deep_aborts, SIGABRT);
    suite_add_tcase(s, tc);
    return s;
}
