/* ring_cache: the bounded, short-lived cache of catalogue answers. */
#include <stdio.h>
#include <string.h>

#include "ring_cache.h"
#include "unit.h"

static bool get(ring_cache *c, const char *key, long long now, char *out, size_t outsz)
{
    const char *value;
    size_t len;
    if (!ring_cache_get(c, key, strlen(key), now, &value, &len))
        return false;
    snprintf(out, outsz, "%.*s", (int)len, value);
    return true;
}

static void put(ring_cache *c, const char *key, const char *value, long long now)
{
    ring_cache_put(c, key, strlen(key), value, strlen(value), now);
}

START_TEST(returns_what_was_put)
{
    ring_cache *c = ring_cache_new(4096, 16, 1000);
    char out[64];
    ck_assert(!get(c, "a", 0, out, sizeof out));
    put(c, "a", "alpha", 0);
    put(c, "b", "beta", 0);
    ck_assert(get(c, "a", 10, out, sizeof out));
    ck_assert_str_eq(out, "alpha");
    ck_assert(get(c, "b", 10, out, sizeof out));
    ck_assert_str_eq(out, "beta");
    ck_assert(!get(c, "c", 10, out, sizeof out));
    ring_cache_free(c);
}
END_TEST

START_TEST(touching_the_ring_keeps_what_it_holds)
{
    /* market-api touches its ring after its first answer, which may have put an entry. */
    ring_cache *c = ring_cache_new(4096, 16, 1000);
    char out[64];
    put(c, "a", "alpha", 0);
    ring_cache_touch(c);
    ring_cache_touch(c); /* once is enough; again changes nothing */
    ck_assert(get(c, "a", 10, out, sizeof out));
    ck_assert_str_eq(out, "alpha");
    put(c, "b", "beta", 0);
    ck_assert(get(c, "b", 10, out, sizeof out));
    ck_assert_str_eq(out, "beta");
    ring_cache_free(c);
    ring_cache *off = ring_cache_new(4096, 16, 0);
    ring_cache_touch(off); /* a cache that is off is never touched */
    ring_cache_free(off);
}
END_TEST

START_TEST(entries_expire_after_the_ttl)
{
    ring_cache *c = ring_cache_new(4096, 16, 1000);
    char out[64];
    put(c, "a", "alpha", 5000);
    ck_assert(get(c, "a", 5499, out, sizeof out)); /* every life is at least half the TTL */
    ck_assert(!get(c, "a", 6000, out, sizeof out));
    ck_assert(!get(c, "a", 4999, out, sizeof out)); /* a clock that went back: no use */
    put(c, "a", "again", 6000);
    ck_assert(get(c, "a", 6400, out, sizeof out));
    ck_assert_str_eq(out, "again");
    ring_cache_free(c);
}
END_TEST

/* Entries put at the same moment do not all expire at the same moment. */
START_TEST(lives_are_spread_between_half_the_ttl_and_the_ttl)
{
    ring_cache *c = ring_cache_new(64 * 1024, 4096, 1000);
    char key[16], out[64];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i);
        put(c, key, "v", 0);
    }
    /* Keys that share a slot replace each other: count against those kept. */
    int kept = 0, alive_early = 0, alive_late = 0, alive_after = 0;
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i);
        kept += get(c, key, 0, out, sizeof out);
        alive_early += get(c, key, 499, out, sizeof out);
        alive_late += get(c, key, 800, out, sizeof out);
        alive_after += get(c, key, 1000, out, sizeof out);
    }
    ck_assert_int_gt(kept, 150);
    ck_assert_int_eq(alive_early, kept);
    ck_assert_int_gt(alive_late, kept / 10);
    ck_assert_int_lt(alive_late, kept - kept / 10);
    ck_assert_int_eq(alive_after, 0);
    ring_cache_free(c);
}
END_TEST

START_TEST(a_newer_put_replaces_the_value)
{
    ring_cache *c = ring_cache_new(4096, 16, 1000);
    char out[64];
    put(c, "k", "one", 0);
    put(c, "k", "two", 1);
    ck_assert(get(c, "k", 2, out, sizeof out));
    ck_assert_str_eq(out, "two");
    ring_cache_free(c);
}
END_TEST

/* One slot: every key collides, and the last one put wins without confusing keys. */
START_TEST(colliding_keys_never_answer_for_each_other)
{
    ring_cache *c = ring_cache_new(4096, 1, 1000);
    char out[64];
    put(c, "first", "1", 0);
    put(c, "second", "2", 0);
    ck_assert(!get(c, "first", 1, out, sizeof out));
    ck_assert(get(c, "second", 1, out, sizeof out));
    ck_assert_str_eq(out, "2");
    ring_cache_free(c);
}
END_TEST

/* The ring is overwritten in order: old entries go, the newest stay intact. */
START_TEST(old_entries_are_overwritten_when_the_ring_wraps)
{
    ring_cache *c = ring_cache_new(256, 64, 1000);
    char key[16], value[64], out[64];
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(value, sizeof value, "value-%d-xxxxxxxxxxxxxxxxxxxx", i);
        put(c, key, value, 0);
    }
    ck_assert(!get(c, "k0", 1, out, sizeof out));
    ck_assert(!get(c, "k20", 1, out, sizeof out));
    for (int i = 36; i < 40; i++) {
        snprintf(key, sizeof key, "k%d", i);
        snprintf(value, sizeof value, "value-%d-xxxxxxxxxxxxxxxxxxxx", i);
        ck_assert(get(c, key, 1, out, sizeof out));
        ck_assert_str_eq(out, value);
    }
    ring_cache_free(c);
}
END_TEST

START_TEST(too_large_entries_are_not_kept)
{
    ring_cache *c = ring_cache_new(256, 16, 1000);
    char big[100], out[128];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    put(c, "big", big, 0);
    ck_assert(!get(c, "big", 1, out, sizeof out));
    put(c, "small", "s", 0);
    ck_assert(get(c, "small", 1, out, sizeof out));
    ring_cache_free(c);
}
END_TEST

START_TEST(clear_forgets_everything)
{
    ring_cache *c = ring_cache_new(4096, 16, 1000);
    char out[64];
    put(c, "a", "alpha", 0);
    ring_cache_clear(c);
    ck_assert(!get(c, "a", 1, out, sizeof out));
    put(c, "a", "beta", 2);
    ck_assert(get(c, "a", 3, out, sizeof out));
    ck_assert_str_eq(out, "beta");
    ring_cache_free(c);
}
END_TEST

START_TEST(a_zero_ttl_turns_it_off)
{
    ring_cache *c = ring_cache_new(4096, 16, 0);
    char out[64];
    put(c, "a", "alpha", 0);
    ck_assert(!get(c, "a", 0, out, sizeof out));
    ring_cache_free(c);
}
END_TEST

/* Keys that differ only after a shared prefix, or by length, stay apart. */
START_TEST(keys_are_compared_whole)
{
    ring_cache *c = ring_cache_new(4096, 4096, 1000);
    char out[64];
    put(c, "stmt|3:abc", "one", 0);
    put(c, "stmt|3:abd", "two", 0);
    put(c, "stmt|2:ab", "three", 0);
    ck_assert(get(c, "stmt|3:abc", 1, out, sizeof out));
    ck_assert_str_eq(out, "one");
    ck_assert(get(c, "stmt|3:abd", 1, out, sizeof out));
    ck_assert_str_eq(out, "two");
    ck_assert(get(c, "stmt|2:ab", 1, out, sizeof out));
    ck_assert_str_eq(out, "three");
    ck_assert(!get(c, "stmt|3:ab", 1, out, sizeof out));
    ring_cache_free(c);
}
END_TEST

Suite *ring_cache_suite(void)
{
    Suite *s = suite_create("ring_cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, returns_what_was_put);
    tcase_add_test(tc, touching_the_ring_keeps_what_it_holds);
    tcase_add_test(tc, entries_expire_after_the_ttl);
    tcase_add_test(tc, lives_are_spread_between_half_the_ttl_and_the_ttl);
    tcase_add_test(tc, a_newer_put_replaces_the_value);
    tcase_add_test(tc, colliding_keys_never_answer_for_each_other);
    tcase_add_test(tc, old_entries_are_overwritten_when_the_ring_wraps);
    tcase_add_test(tc, too_large_entries_are_not_kept);
    tcase_add_test(tc, clear_forgets_everything);
    tcase_add_test(tc, a_zero_ttl_turns_it_off);
    tcase_add_test(tc, keys_are_compared_whole);
    suite_add_tcase(s, tc);
    return s;
}
