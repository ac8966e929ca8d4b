/* key_budget: a host's kept keys and the rate limit's blocks (docs/contract.md section 3). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "key_budget.h"
#include "unit.h"

#define SLOTS 64
#define LIMIT 600
#define WINDOW 1000
#define NOW_MS (WINDOW * 60000LL + 1000)

static key_budget *fresh(void)
{
    void *memory = calloc(1, key_budget_size(SLOTS));
    ck_assert_ptr_nonnull(memory);
    return key_budget_attach(memory, SLOTS, 42);
}

static void hash_of(uint8_t hash[KEY_BUDGET_HASH_LEN], int n)
{
    memset(hash, 0, KEY_BUDGET_HASH_LEN);
    hash[0] = (uint8_t)n;
    hash[31] = (uint8_t)(n >> 8);
}

static key_row row_of(int64_t id)
{
    key_row row = {.key_id = id, .live = false, .read_write = false, .expires_ms = 0};
    strcpy(row.account_id, "acct_1");
    return row;
}

/* The database's side of one take of `want` for this host in a window no other host holds. */
static kb_stored take_from_db(key_budget *kb, const uint8_t *hash, long *db_count, long want)
{
    long granted = want < LIMIT - *db_count ? want : LIMIT - *db_count;
    *db_count += granted;
    key_row row = row_of(7);
    return key_budget_store(kb, hash, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true,
                            granted, *db_count, false);
}

START_TEST(an_unknown_key_asks_the_database_for_a_block)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 1);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    ck_assert_int_eq(a.want, key_budget_block(LIMIT));
    ck_assert(!a.row_fresh);
    ck_assert_uint_eq(key_budget_host(kb), 42);
    free(kb);
}
END_TEST

START_TEST(a_block_serves_the_next_requests_with_exact_remaining)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 1);
    long db = 0, block = key_budget_block(LIMIT);
    kb_stored st = take_from_db(kb, h, &db, block);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(st.remaining, LIMIT - 1);
    for (long i = 1; i < block; i++) {
        kb_answer a;
        ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ADMIT);
        ck_assert_int_eq(a.remaining, LIMIT - 1 - i);
        ck_assert_int_eq(a.row.key_id, 7);
        ck_assert_str_eq(a.row.account_id, "acct_1");
    }
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    ck_assert(a.row_fresh);
    free(kb);
}
END_TEST

START_TEST(a_host_alone_gets_exactly_the_limit_then_refuses_without_the_database)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 2);
    long db = 0, admitted = 0, asked = 0;
    for (int i = 0; i < 650; i++) {
        kb_answer a;
        kb_verdict v = key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a);
        if (v == KB_ASK) {
            asked++;
            kb_stored st = take_from_db(kb, h, &db, a.want);
            v = st.verdict;
        }
        if (v == KB_ADMIT)
            admitted++;
    }
    ck_assert_int_eq(admitted, LIMIT);
    ck_assert_int_eq(db, LIMIT);
    /* One statement per block, then one per refusal: only the database refuses. */
    ck_assert_int_le(asked, LIMIT / key_budget_block(LIMIT) + 1 + 50);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    free(kb);
}
END_TEST

START_TEST(a_new_window_starts_afresh)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 3);
    long db = 0;
    take_from_db(kb, h, &db, 10);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ADMIT);
    /* The next minute: what was held of the last one is void. */
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW + 1, LIMIT, NOW_MS + 60000, true, &a), KB_ASK);
    free(kb);
}
END_TEST

START_TEST(an_invalidation_makes_rows_stale_but_keeps_the_budget)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 4);
    long db = 0;
    take_from_db(kb, h, &db, 10);
    key_budget_invalidate(kb);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    ck_assert(!a.row_fresh);
    /* A row read before the invalidation is never kept. */
    uint64_t before = key_budget_generation(kb);
    key_budget_invalidate(kb);
    key_row row = row_of(7);
    kb_stored st = key_budget_store(kb, h, before, &row, WINDOW, 1, LIMIT, true, 1, 11, false);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    /* Read again after it: kept, and the budget still holds the rest of the block. */
    key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true, 1, 12, false);
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ADMIT);
    ck_assert_int_eq(a.remaining, LIMIT - 4);
    free(kb);
}
END_TEST

START_TEST(an_expired_key_is_asked_for_again)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 5);
    key_row row = row_of(9);
    row.expires_ms = NOW_MS + 10;
    key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true, 10, 10, false);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ADMIT);
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS + 10, true, &a), KB_ASK);
    free(kb);
}
END_TEST

START_TEST(a_read_takes_nothing)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 6);
    long db = 0;
    take_from_db(kb, h, &db, 10);
    kb_answer a;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, false, &a), KB_ADMIT);
        ck_assert_int_eq(a.remaining, LIMIT - 1);
    }
    free(kb);
}
END_TEST

START_TEST(a_shared_window_gives_everything_back_and_takes_one_at_a_time)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 7);
    long db = 0;
    take_from_db(kb, h, &db, 37); /* 36 held */
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ADMIT);
    long unused, blocks;
    ck_assert(key_budget_settle(kb, 7, WINDOW, &unused, &blocks));
    ck_assert_int_eq(unused, 35);
    ck_assert_int_eq(blocks, 1);
    ck_assert(!key_budget_settle(kb, 7, WINDOW, &unused, &blocks));
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    ck_assert_int_eq(a.want, 1);
    /* A block granted before the window was shared, stored after: all of it goes back. */
    key_row row = row_of(7);
    kb_stored st = key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true,
                                    5, 80, true);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(st.give_back, 4);
    ck_assert_int_eq(st.blocks, 1);
    ck_assert_int_eq(st.remaining, LIMIT - 80);
    free(kb);
}
END_TEST

START_TEST(the_database_learning_of_a_second_host_returns_the_budget)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 8);
    long db = 0;
    take_from_db(kb, h, &db, 20);
    take_from_db(kb, h, &db, 20); /* 38 held, 2 blocks */
    key_row row = row_of(7);
    kb_stored st = key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true,
                                    1, 60, true);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(st.give_back, 38);
    ck_assert_int_eq(st.blocks, 2);
    free(kb);
}
END_TEST

START_TEST(over_the_limit_a_block_another_worker_took_is_used)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 9);
    key_row row = row_of(7);
    uint64_t g = key_budget_generation(kb);
    key_budget_store(kb, h, g, &row, WINDOW, 1, LIMIT, true, 2, LIMIT, false); /* 1 held */
    kb_stored st = key_budget_store(kb, h, g, &row, WINDOW, 1, LIMIT, true, 0, LIMIT, false);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(st.remaining, LIMIT - 2);
    st = key_budget_store(kb, h, g, &row, WINDOW, 1, LIMIT, true, 0, LIMIT, false);
    ck_assert_int_eq(st.verdict, KB_REFUSE);
    ck_assert_int_eq(st.remaining, 0);
    free(kb);
}
END_TEST

START_TEST(a_window_started_again_in_the_database_is_counted_from_its_count)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 11);
    key_row row = row_of(7);
    uint64_t g = key_budget_generation(kb);
    for (long i = 1; i <= 3; i++) /* three requests, one take each, all used */
        key_budget_store(kb, h, g, &row, WINDOW, 1, 3, true, 1, i, false);
    kb_stored st = key_budget_store(kb, h, g, &row, WINDOW, 1, 3, true, 0, 3, false);
    ck_assert_int_eq(st.verdict, KB_REFUSE);
    /* The row was deleted and made again (another incarnation): its count is the window's. */
    st = key_budget_store(kb, h, g, &row, WINDOW, 2, 3, true, 1, 1, false);
    ck_assert_int_eq(st.verdict, KB_ADMIT);
    ck_assert_int_eq(st.remaining, 2);
    free(kb);
}
END_TEST

START_TEST(a_full_table_sends_keys_to_the_database_with_nothing_kept)
{
    key_budget *kb = fresh();
    uint8_t h[KEY_BUDGET_HASH_LEN];
    key_row row = row_of(1);
    /* Every slot holds a key of the current window (hashes collide into one run). */
    for (int i = 0; i < SLOTS; i++) {
        hash_of(h, 256 * (i + 1));
        h[0] = 0;
        key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true, 1, 1,
                         false);
    }
    hash_of(h, 256 * (SLOTS + 1));
    h[0] = 0;
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    ck_assert_int_eq(a.want, 1);
    kb_stored st = key_budget_store(kb, h, key_budget_generation(kb), &row, WINDOW, 1, LIMIT, true,
                                    3, 3, false);
    ck_assert_int_eq(st.give_back, 2);
    ck_assert_int_eq(st.blocks, 1);
    free(kb);
}
END_TEST

START_TEST(a_lock_left_by_a_dead_process_is_taken_over)
{
    size_t size = key_budget_size(SLOTS);
    void *shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(shared, MAP_FAILED);
    key_budget *kb = key_budget_attach(shared, SLOTS, 5);
    uint8_t h[KEY_BUDGET_HASH_LEN];
    hash_of(h, 10);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) { /* dies holding the table's lock */
        key_budget_lock(kb);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    kb_answer a;
    ck_assert_int_eq(key_budget_take(kb, h, WINDOW, LIMIT, NOW_MS, true, &a), KB_ASK);
    munmap(shared, size);
}
END_TEST

Suite *key_budget_suite(void)
{
    Suite *s = suite_create("key_budget");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, an_unknown_key_asks_the_database_for_a_block);
    tcase_add_test(tc, a_block_serves_the_next_requests_with_exact_remaining);
    tcase_add_test(tc, a_host_alone_gets_exactly_the_limit_then_refuses_without_the_database);
    tcase_add_test(tc, a_new_window_starts_afresh);
    tcase_add_test(tc, an_invalidation_makes_rows_stale_but_keeps_the_budget);
    tcase_add_test(tc, an_expired_key_is_asked_for_again);
    tcase_add_test(tc, a_read_takes_nothing);
    tcase_add_test(tc, a_shared_window_gives_everything_back_and_takes_one_at_a_time);
    tcase_add_test(tc, the_database_learning_of_a_second_host_returns_the_budget);
    tcase_add_test(tc, over_the_limit_a_block_another_worker_took_is_used);
    tcase_add_test(tc, a_window_started_again_in_the_database_is_counted_from_its_count);
    tcase_add_test(tc, a_full_table_sends_keys_to_the_database_with_nothing_kept);
    tcase_add_test(tc, a_lock_left_by_a_dead_process_is_taken_over);
    suite_add_tcase(s, tc);
    return s;
}
