/* buf: the growable response buffer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "buf.h"
#include "unit.h"

static buf b;

static void setup(void)
{
    buf_init(&b, 0);
}

static void teardown(void)
{
    buf_free(&b);
}

START_TEST(starts_empty_and_terminated)
{
    ck_assert_uint_eq(b.len, 0);
    ck_assert_ptr_nonnull(b.data);
    ck_assert_str_eq(b.data, "");
    ck_assert_uint_gt(b.cap, 0);
}
END_TEST

START_TEST(appends)
{
    buf_puts(&b, "abc");
    buf_putc(&b, '-');
    buf_append(&b, "xyz", 2);
    buf_printf(&b, "%d/%s", 42, "z");
    ck_assert_str_eq(b.data, "abc-xy42/z");
    ck_assert_uint_eq(b.len, 10);
    buf_append(&b, "", 0);
    buf_puts(&b, "");
    ck_assert_uint_eq(b.len, 10);
}
END_TEST

START_TEST(binary_data_keeps_length)
{
    buf_append(&b, "a\0b", 3);
    ck_assert_uint_eq(b.len, 3);
    ck_assert_mem_eq(b.data, "a\0b", 4);
}
END_TEST

START_TEST(grows_across_many_appends)
{
    for (int i = 0; i < 10000; i++)
        buf_putc(&b, (char)('a' + i % 26));
    ck_assert_uint_eq(b.len, 10000);
    ck_assert_uint_eq(strlen(b.data), 10000);
    ck_assert_int_eq(b.data[9999], 'a' + 9999 % 26);
    ck_assert_uint_gt(b.cap, b.len);
}
END_TEST

START_TEST(printf_larger_than_capacity)
{
    buf_puts(&b, "x");
    buf_printf(&b, "%05000d|", 1);
    ck_assert_uint_eq(b.len, 5002);
    ck_assert_int_eq(b.data[5000], '1');
    ck_assert_int_eq(b.data[5001], '|');
    ck_assert_int_eq(b.data[5002], '\0');
    /* Exactly filling the capacity still leaves room for the terminator. */
    buf_clear(&b);
    size_t cap = b.cap;
    buf_printf(&b, "%0*d", (int)cap - 1, 0);
    ck_assert_uint_eq(b.len, cap - 1);
    ck_assert_int_eq(b.data[b.len], '\0');
}
END_TEST

START_TEST(printf_one_byte_past_the_room)
{
    /* A text as long as the room left (no byte for the terminator) is formatted again
     * after the buffer grows, whole. */
    buf_puts(&b, "ab");
    size_t room = b.cap - b.len;
    buf_printf(&b, "%0*d", (int)room, 7);
    ck_assert_uint_eq(b.len, 2 + room);
    ck_assert_int_eq(b.data[0], 'a');
    ck_assert_int_eq(b.data[2], '0');
    ck_assert_int_eq(b.data[b.len - 1], '7');
    ck_assert_int_eq(b.data[b.len], '\0');
    ck_assert_uint_gt(b.cap, b.len);
}
END_TEST

START_TEST(clear_keeps_memory)
{
    buf_puts(&b, "some response body");
    size_t cap = b.cap;
    buf_clear(&b);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_str_eq(b.data, "");
    ck_assert_uint_eq(b.cap, cap);
    buf_puts(&b, "next");
    ck_assert_str_eq(b.data, "next");
}
END_TEST

START_TEST(reusable_after_free)
{
    buf_puts(&b, "abc");
    buf_free(&b);
    ck_assert_ptr_null(b.data);
    ck_assert_uint_eq(b.len, 0);
    buf_clear(&b);
    buf_puts(&b, "again");
    ck_assert_str_eq(b.data, "again");
}
END_TEST

START_TEST(init_with_capacity)
{
    buf big;
    buf_init(&big, 100000);
    ck_assert_uint_gt(big.cap, 100000);
    ck_assert_str_eq(big.data, "");
    buf_free(&big);
}
END_TEST

START_TEST(arena_buffer_grows_in_its_arena)
{
    arena a;
    arena_init(&a, 4096);
    buf ab;
    buf_init_arena(&ab, &a, 8);
    for (int i = 0; i < 2000; i++)
        buf_printf(&ab, "%d,", i % 10);
    ck_assert_uint_eq(ab.len, 4000);
    ck_assert_int_eq(ab.data[ab.len], '\0');
    ck_assert(memcmp(ab.data, "0,1,2,3,4,5,6,7,8,9,0,", 22) == 0);
    ck_assert(memcmp(ab.data + 3980, "0,1,2,3,4,5,6,7,8,9,", 20) == 0);
    /* Freeing it is a no-op (the arena owns the memory); LeakSanitizer sees no leak
     * once the arena is freed, and no double free either. */
    buf_free(&ab);
    ck_assert_ptr_null(ab.data);
    arena_free(&a);
}
END_TEST

START_TEST(appends_a_whole_file)
{
    char path[] = "/tmp/market-buf-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    char big[40000];
    memset(big, 'x', sizeof big);
    ck_assert_int_eq(write(fd, big, sizeof big), (int)sizeof big);
    close(fd);
    buf file;
    buf_init(&file, 16);
    buf_puts(&file, "head:");
    ck_assert(buf_append_file(&file, path));
    ck_assert_uint_eq(file.len, 5 + sizeof big);
    ck_assert_int_eq(file.data[file.len - 1], 'x');
    ck_assert_int_eq(file.data[file.len], '\0');
    unlink(path);
    errno = 0;
    ck_assert(!buf_append_file(&file, path));
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_uint_eq(file.len, 5 + sizeof big);
    buf_free(&file);
}
END_TEST

Suite *buf_suite(void)
{
    Suite *s = suite_create("buf");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, starts_empty_and_terminated);
    tcase_add_test(tc, appends);
    tcase_add_test(tc, printf_one_byte_past_the_room);
    tcase_add_test(tc, binary_data_keeps_length);
    tcase_add_test(tc, grows_across_many_appends);
    tcase_add_test(tc, printf_larger_than_capacity);
    tcase_add_test(tc, clear_keeps_memory);
    tcase_add_test(tc, reusable_after_free);
    tcase_add_test(tc, init_with_capacity);
    tcase_add_test(tc, arena_buffer_grows_in_its_arena);
    tcase_add_test(tc, appends_a_whole_file);
    suite_add_tcase(s, tc);
    return s;
}
