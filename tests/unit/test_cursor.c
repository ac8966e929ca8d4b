/* cursor: opaque, tamper-evident, context-bound pagination cursors. */
#include <string.h>

#include "arena.h"
#include "buf.h"
#include "cursor.h"
#include "unit.h"

static const uint8_t key[32] = "0123456789abcdef0123456789abcdef";
static const char *const fields[] = {"2026-11-21T10:04:05Z", "prod_8f3KdL0a"};

static arena a;
static buf context;
static buf cursor;

/* The context of GET /v1/products?category=fonts in test mode, sorted newest first. */
static void products_context(buf *b, const char *category, const char *mode)
{
    buf_clear(b);
    cursor_context_add(b, "route", "products");
    cursor_context_add(b, "category", category);
    cursor_context_add(b, "sort", "newest");
    cursor_context_add(b, "mode", mode);
}

static void setup(void)
{
    arena_init(&a, 4096);
    buf_init(&context, 128);
    buf_init(&cursor, 128);
    products_context(&context, "fonts", "test");
    cursor_encode(&cursor, key, context.data, fields, 2);
}

static void teardown(void)
{
    buf_free(&cursor);
    buf_free(&context);
    arena_free(&a);
}

static bool decode(const char *ctx, const char *text, int n)
{
    char *out[CURSOR_MAX_FIELDS];
    return cursor_decode(&a, key, ctx, text, out, n);
}

START_TEST(round_trip)
{
    char *out[2] = {NULL, NULL};
    ck_assert(cursor_decode(&a, key, context.data, cursor.data, out, 2));
    ck_assert_str_eq(out[0], fields[0]);
    ck_assert_str_eq(out[1], fields[1]);
}
END_TEST

START_TEST(is_url_safe)
{
    ck_assert_uint_gt(cursor.len, 0);
    ck_assert_uint_eq(strspn(cursor.data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789-_."),
                      cursor.len);
    ck_assert_ptr_nonnull(strchr(cursor.data, '.'));
}
END_TEST

START_TEST(round_trip_edge_fields)
{
    static const char *const cases[][3] = {
        {"", "", ""}, {"x", "", "y"}, {"\xc3\xa9t\xc3\xa9", "a.b", "c=d;e"}, {"0", "0", "0"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_clear(&cursor);
        cursor_encode(&cursor, key, context.data, cases[i], 3);
        char *out[3];
        ck_assert(cursor_decode(&a, key, context.data, cursor.data, out, 3));
        for (int f = 0; f < 3; f++)
            ck_assert_str_eq(out[f], cases[i][f]);
    }
    const char *four[] = {"1", "22", "333", "4444"};
    buf_clear(&cursor);
    cursor_encode(&cursor, key, context.data, four, 4);
    char *out[4];
    ck_assert(cursor_decode(&a, key, context.data, cursor.data, out, 4));
    ck_assert_str_eq(out[3], "4444");
}
END_TEST

START_TEST(every_tampered_byte_is_rejected)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789-_.=+/ %~";
    char *copy = arena_strdup(&a, cursor.data);
    for (size_t i = 0; i < cursor.len; i++) {
        char original = copy[i];
        for (const char *c = alphabet; *c != '\0'; c++) {
            if (*c == original)
                continue;
            copy[i] = *c;
            ck_assert_msg(!decode(context.data, copy, 2), "accepted %s (byte %zu)", copy, i);
        }
        copy[i] = original;
    }
    ck_assert(decode(context.data, copy, 2));
}
END_TEST

START_TEST(truncated_or_extended_is_rejected)
{
    char *copy = arena_strdup(&a, cursor.data);
    for (size_t n = 0; n < cursor.len; n++) {
        copy[n] = '\0';
        ck_assert_msg(!decode(context.data, copy, 2), "accepted prefix of %zu bytes", n);
        copy[n] = cursor.data[n];
    }
    ck_assert(!decode(context.data, arena_printf(&a, "%sA", cursor.data), 2));
    ck_assert(!decode(context.data, arena_printf(&a, "A%s", cursor.data), 2));
    ck_assert(!decode(context.data, arena_printf(&a, "%s.", cursor.data), 2));
}
END_TEST

START_TEST(other_context_is_rejected)
{
    buf other;
    buf_init(&other, 128);
    products_context(&other, "icons", "test");
    ck_assert(!decode(other.data, cursor.data, 2));
    products_context(&other, "fonts", "live");
    ck_assert(!decode(other.data, cursor.data, 2));
    products_context(&other, NULL, "test");
    ck_assert(!decode(other.data, cursor.data, 2));
    products_context(&other, "fonts", "test");
    ck_assert(decode(other.data, cursor.data, 2));
    ck_assert(!decode("", cursor.data, 2));
    buf_free(&other);
}
END_TEST

START_TEST(other_key_is_rejected)
{
    uint8_t other[32];
    memcpy(other, key, sizeof other);
    other[31] ^= 1;
    char *out[2];
    ck_assert(!cursor_decode(&a, other, context.data, cursor.data, out, 2));
}
END_TEST

START_TEST(context_encoding_is_unambiguous)
{
    buf x, y;
    buf_init(&x, 64);
    buf_init(&y, 64);
    cursor_context_add(&x, "q", NULL);
    cursor_context_add(&y, "q", "");
    ck_assert_str_ne(x.data, y.data);

    buf_clear(&x);
    buf_clear(&y);
    cursor_context_add(&x, "a", "1;b=1:x");
    cursor_context_add(&y, "a", "1");
    cursor_context_add(&y, "b", "x");
    ck_assert_str_ne(x.data, y.data);

    buf_clear(&x);
    buf_clear(&y);
    cursor_context_add(&x, "q", "-");
    cursor_context_add(&y, "q", NULL);
    ck_assert_str_ne(x.data, y.data);
    buf_free(&x);
    buf_free(&y);
}
END_TEST

START_TEST(wrong_field_count_is_rejected)
{
    ck_assert(!decode(context.data, cursor.data, 1));
    ck_assert(!decode(context.data, cursor.data, 3));
    ck_assert(!decode(context.data, cursor.data, 0));
    ck_assert(!decode(context.data, cursor.data, CURSOR_MAX_FIELDS + 1));
    ck_assert(!decode(context.data, cursor.data, -1));
}
END_TEST

START_TEST(garbage_is_rejected)
{
    static const char *const bad[] = {
        "",
        ".",
        "..",
        "abc",
        "abc.",
        ".abc",
        "!!!.@@@",
        "null",
        "0",
        "a.b.c",
        "AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
        "AAAA.AAAAAAAAAAAAAAAAAAAAAA==",
        "\xc3\xa9.\xc3\xa9",
        " ",
        "%2E",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!decode(context.data, bad[i], 2), "accepted \"%s\"", bad[i]);
}
END_TEST

START_TEST(over_long_is_rejected)
{
    char *field = arena_alloc(&a, 1001);
    memset(field, 'x', 1000);
    field[1000] = '\0';
    const char *one[] = {field};

    /* The longest field whose cursor still fits decodes; one byte more does not. */
    size_t fit = 0;
    for (size_t n = 300; n <= 1000; n++) {
        field[n] = '\0';
        buf_clear(&cursor);
        cursor_encode(&cursor, key, context.data, one, 1);
        bool ok = decode(context.data, cursor.data, 1);
        ck_assert_msg(ok == (cursor.len <= CURSOR_MAX_LEN), "n=%zu len=%zu", n, cursor.len);
        if (ok)
            fit = n;
        field[n] = 'x';
    }
    ck_assert_uint_gt(fit, 300);

    char *huge = arena_alloc(&a, 100001);
    memset(huge, 'A', 100000);
    huge[100000] = '\0';
    ck_assert(!decode(context.data, huge, 1));
}
END_TEST

Suite *cursor_suite(void)
{
    Suite *s = suite_create("cursor");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, is_url_safe);
    tcase_add_test(tc, round_trip_edge_fields);
    tcase_add_test(tc, every_tampered_byte_is_rejected);
    tcase_add_test(tc, truncated_or_extended_is_rejected);
    tcase_add_test(tc, other_context_is_rejected);
    tcase_add_test(tc, other_key_is_rejected);
    tcase_add_test(tc, context_encoding_is_unambiguous);
    tcase_add_test(tc, wrong_field_count_is_rejected);
    tcase_add_test(tc, garbage_is_rejected);
    tcase_add_test(tc, over_long_is_rejected);
    suite_add_tcase(s, tc);
    return s;
}
