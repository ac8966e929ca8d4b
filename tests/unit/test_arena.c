/* arena: the per-request bump allocator. */
#include <signal.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "unit.h"

static arena a;

static void setup(void)
{
    arena_init(&a, 256);
}

static void teardown(void)
{
    arena_free(&a);
}

static bool aligned(const void *p)
{
    return (uintptr_t)p % alignof(max_align_t) == 0;
}

START_TEST(allocations_are_aligned_and_disjoint)
{
    char *prev = NULL;
    size_t prev_size = 0;
    for (size_t size = 1; size < 100; size += 7) {
        char *p = arena_alloc(&a, size);
        ck_assert(aligned(p));
        memset(p, 0xab, size);
        if (prev != NULL)
            ck_assert(p >= prev + prev_size || p + size <= prev);
        prev = p;
        prev_size = size;
    }
}
END_TEST

START_TEST(contents_survive_later_allocations)
{
    char *first[64];
    for (int i = 0; i < 64; i++) {
        first[i] = arena_alloc(&a, 40);
        memset(first[i], i, 40);
    }
    for (int i = 0; i < 64; i++)
        for (int k = 0; k < 40; k++)
            ck_assert_int_eq(first[i][k], i);
}
END_TEST

START_TEST(large_allocation_gets_its_own_block)
{
    char *small = arena_alloc(&a, 16);
    char *big = arena_alloc(&a, 10000);
    ck_assert(aligned(big));
    memset(big, 1, 10000);
    memset(small, 2, 16);
    char *after = arena_alloc(&a, 16);
    memset(after, 3, 16);
    ck_assert_int_eq(big[0], 1);
    ck_assert_int_eq(big[9999], 1);
    ck_assert_int_eq(small[15], 2);
}
END_TEST

START_TEST(zero_size_allocation)
{
    void *p = arena_alloc(&a, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert(aligned(p));
}
END_TEST

START_TEST(string_helpers)
{
    ck_assert_str_eq(arena_strdup(&a, "hello"), "hello");
    ck_assert_str_eq(arena_strdup(&a, ""), "");
    char *part = arena_strndup(&a, "hello world", 5);
    ck_assert_str_eq(part, "hello");
    ck_assert_str_eq(arena_printf(&a, "%s=%d", "limit", 20), "limit=20");
    char *wide = arena_printf(&a, "%0500d", 7);
    ck_assert_uint_eq(strlen(wide), 500);
    ck_assert_int_eq(wide[499], '7');
    ck_assert_int_eq(wide[0], '0');
}
END_TEST

START_TEST(reset_reuses_the_first_block)
{
    char *first = arena_alloc(&a, 8);
    for (int i = 0; i < 100; i++)
        memset(arena_alloc(&a, 200), i, 200);
    arena_alloc(&a, 5000);
    arena_reset(&a);
    char *again = arena_alloc(&a, 8);
    ck_assert_ptr_eq(again, first);
    arena_reset(&a);
    arena_reset(&a);
    ck_assert_ptr_eq(arena_alloc(&a, 8), first);
}
END_TEST

START_TEST(overflowing_size_aborts)
{
    arena_alloc(&a, SIZE_MAX - 2);
}
END_TEST

Suite *arena_suite(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, allocations_are_aligned_and_disjoint);
    tcase_add_test(tc, contents_survive_later_allocations);
    tcase_add_test(tc, large_allocation_gets_its_own_block);
    tcase_add_test(tc, zero_size_allocation);
    tcase_add_test(tc, string_helpers);
    tcase_add_test(tc, reset_reuses_the_first_block);
    if (unit_forking())
        tcase_add_test_raise_signal(tc, overflowing_size_aborts, SIGABRT);
    suite_add_tcase(s, tc);
    return s;
}
