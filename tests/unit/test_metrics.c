/* metrics: the counters a pool's processes share through one file. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "metrics.h"
#include "unit.h"

static char dir[64];
static char path[128];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/market-unit-metrics.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/metrics", dir);
}

static void remove_dir(void)
{
    unlink(path);
    rmdir(dir);
}

static metrics *open_ok(uint32_t layout, uint32_t n)
{
    char err[256] = "";
    metrics *m = metrics_open(path, layout, n, 0, err, sizeof err);
    ck_assert_msg(m != NULL, "metrics_open: %s", err);
    return m;
}

/* A child process that lives until it is killed: a worker of the pool. */
static pid_t live_child(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    return pid;
}

static void end_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

START_TEST(sums_the_slots_of_every_process)
{
    metrics *a = open_ok(1, 3), *b = open_ok(1, 3);
    pid_t other = live_child();
    ck_assert(metrics_claim(a, getpid()));
    ck_assert(metrics_claim(b, other)); /* b stands for the other worker */
    metrics_add(a, 0, 1);
    metrics_add(a, 2, 5);
    metrics_add(b, 0, 2);
    metrics_add(b, 1, 7);
    uint64_t sum[3];
    ck_assert_uint_eq(metrics_sum(a, sum), 2);
    ck_assert_uint_eq(sum[0], 3);
    ck_assert_uint_eq(sum[1], 7);
    ck_assert_uint_eq(sum[2], 5);
    /* Either process's view is the same file. */
    uint64_t again[3];
    metrics_sum(b, again);
    ck_assert_mem_eq(sum, again, sizeof sum);
    end_child(other);
    metrics_close(a);
    metrics_close(b);
}
END_TEST

START_TEST(what_each_process_serves_is_seen_by_the_others)
{
    metrics *a = open_ok(1, 1), *b = open_ok(1, 1), *c = open_ok(1, 1);
    pid_t second = live_child(), third = live_child();
    ck_assert(metrics_claim(a, getpid()));
    ck_assert(metrics_claim(b, second));
    ck_assert(metrics_claim(c, third));
    ck_assert_uint_eq(metrics_serving(a, 7), 0);

    metrics_serve(a, 7);
    metrics_serve(b, 7);
    metrics_serve(c, 9);
    ck_assert_uint_eq(metrics_serving(a, 7), 1); /* b; a does not count itself */
    ck_assert_uint_eq(metrics_serving(c, 7), 2);
    ck_assert_uint_eq(metrics_serving(a, 9), 1);
    metrics_serve(b, 0); /* b's request is answered */
    ck_assert_uint_eq(metrics_serving(c, 7), 1);

    /* A worker that dies while it serves holds nothing: its word is stale. */
    metrics_serve(b, 7);
    end_child(second);
    ck_assert_uint_eq(metrics_serving(c, 7), 1);
    /* Its replacement takes the slot serving nothing. */
    pid_t replacement = live_child();
    metrics *d = open_ok(1, 1);
    ck_assert(metrics_claim(d, replacement));
    ck_assert_uint_eq(metrics_serving(c, 7), 1);
    metrics_serve(a, 0);
    ck_assert_uint_eq(metrics_serving(c, 7), 0);
    end_child(third);
    end_child(replacement);
    metrics_close(a);
    metrics_close(b);
    metrics_close(c);
    metrics_close(d);
}
END_TEST

START_TEST(a_dead_process_slot_is_reclaimed_with_its_counts)
{
    metrics *a = open_ok(1, 2);
    pid_t dead = live_child();
    ck_assert(metrics_claim(a, dead));
    metrics_add(a, 1, 40);
    end_child(dead);

    /* A replacement worker takes the dead one's slot: the sums do not go down, and the
     * dead process no longer counts as live. */
    metrics *b = open_ok(1, 2);
    uint64_t sum[2];
    ck_assert_uint_eq(metrics_sum(b, sum), 0);
    ck_assert_uint_eq(sum[1], 40);
    ck_assert(metrics_claim(b, getpid()));
    metrics_add(b, 1, 2);
    ck_assert_uint_eq(metrics_sum(b, sum), 1);
    ck_assert_uint_eq(sum[1], 42);

    /* It took the dead slot rather than a free one: a third process gets another. */
    pid_t third = live_child();
    metrics *c = open_ok(1, 2);
    ck_assert(metrics_claim(c, third));
    metrics_add(c, 0, 1);
    ck_assert_uint_eq(metrics_sum(c, sum), 2);
    ck_assert_uint_eq(sum[0], 1);
    ck_assert_uint_eq(sum[1], 42);
    end_child(third);
    metrics_close(a);
    metrics_close(b);
    metrics_close(c);
}
END_TEST

START_TEST(claiming_twice_keeps_one_slot)
{
    metrics *a = open_ok(1, 1);
    ck_assert(metrics_claim(a, getpid()));
    metrics_add(a, 0, 1);
    ck_assert(metrics_claim(a, getpid()));
    metrics_add(a, 0, 1);
    uint64_t sum[1];
    ck_assert_uint_eq(metrics_sum(a, sum), 1);
    ck_assert_uint_eq(sum[0], 2);
    metrics_close(a);
}
END_TEST

START_TEST(counts_before_a_claim_stay_private)
{
    metrics *a = open_ok(1, 1);
    metrics_add(a, 0, 9); /* no slot yet: counted, but no scrape sees it */
    uint64_t sum[1];
    ck_assert_uint_eq(metrics_sum(a, sum), 0);
    ck_assert_uint_eq(sum[0], 0);
    metrics_close(a);
}
END_TEST

START_TEST(another_layout_gets_a_fresh_file)
{
    metrics *old = open_ok(1, 2);
    ck_assert(metrics_claim(old, getpid()));
    metrics_add(old, 0, 5);
    struct stat before, after;
    ck_assert_int_eq(stat(path, &before), 0);

    metrics *fresh = open_ok(2, 4); /* a new version with more counters */
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert(before.st_ino != after.st_ino);
    uint64_t sum[4];
    ck_assert_uint_eq(metrics_sum(fresh, sum), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sum[i], 0);

    /* The old process still counts into its own (now unlinked) file, unharmed. */
    metrics_add(old, 1, 1);
    uint64_t old_sum[2];
    metrics_sum(old, old_sum);
    ck_assert_uint_eq(old_sum[0], 5);
    ck_assert_uint_eq(old_sum[1], 1);

    /* The same layout again reuses the file. */
    metrics *same = open_ok(2, 4);
    ck_assert(metrics_claim(fresh, getpid()));
    metrics_add(fresh, 3, 3);
    metrics_sum(same, sum);
    ck_assert_uint_eq(sum[3], 3);
    metrics_close(old);
    metrics_close(fresh);
    metrics_close(same);
}
END_TEST

START_TEST(a_damaged_file_is_replaced)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a metrics file", f);
    fclose(f);
    metrics *m = open_ok(1, 2);
    uint64_t sum[2];
    ck_assert_uint_eq(metrics_sum(m, sum), 0);
    ck_assert_uint_eq(sum[0] + sum[1], 0);
    metrics_close(m);
}
END_TEST

START_TEST(an_unusable_path_is_an_error)
{
    char err[256] = "";
    metrics *m = metrics_open("/nonexistent-dir/metrics", 1, 1, 0, err, sizeof err);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(err, "MARKET_METRICS_FILE /nonexistent-dir/metrics") != NULL, "%s", err);
}
END_TEST

START_TEST(a_full_table_leaves_the_claim_private)
{
    /* Every slot held by a live process (children that wait to be killed). */
    metrics *m = open_ok(1, 1);
    static pid_t children[METRICS_SLOTS];
    for (int i = 0; i < METRICS_SLOTS; i++) {
        children[i] = live_child();
        ck_assert(metrics_claim(m, children[i]));
        metrics_add(m, 0, 1);
    }
    metrics *late = open_ok(1, 1);
    ck_assert(!metrics_claim(late, getpid()));
    metrics_add(late, 0, 1000); /* private: no scrape sees it */
    uint64_t sum[1];
    ck_assert_uint_eq(metrics_sum(late, sum), METRICS_SLOTS);
    ck_assert_uint_eq(sum[0], METRICS_SLOTS);

    /* Once one of them is gone, its slot is free for the latecomer. */
    end_child(children[7]);
    ck_assert(metrics_claim(late, getpid()));
    metrics_add(late, 0, 1);
    ck_assert_uint_eq(metrics_sum(late, sum), METRICS_SLOTS);
    ck_assert_uint_eq(sum[0], METRICS_SLOTS + 1);
    /* All killed first, then reaped: one at a time would wait for each in turn. */
    for (int i = 0; i < METRICS_SLOTS; i++)
        if (i != 7)
            kill(children[i], SIGKILL);
    for (int i = 0; i < METRICS_SLOTS; i++)
        if (i != 7)
            waitpid(children[i], NULL, 0);
    metrics_close(m);
    metrics_close(late);
}
END_TEST

START_TEST(the_pool_is_idle_only_when_every_live_process_is)
{
    metrics *a = open_ok(1, 1), *b = open_ok(1, 1);
    pid_t other = live_child();
    ck_assert(metrics_claim(a, getpid()));
    ck_assert(metrics_claim(b, other)); /* b stands for the other worker */
    metrics_active(a, 1000);
    metrics_active(b, 4000);
    /* Idle since the latest activity of either, whoever asks. */
    ck_assert_int_eq(metrics_idle_ms(a, 10000), 6000);
    ck_assert_int_eq(metrics_idle_ms(b, 10000), 6000);
    /* One busy worker keeps the pool busy, however long ago the last activity was. */
    metrics_busy(b, true);
    ck_assert_int_eq(metrics_idle_ms(a, 99000), -1);
    metrics_busy(b, false);
    metrics_active(b, 99000);
    ck_assert_int_eq(metrics_idle_ms(a, 99500), 500);
    /* A clock read before another worker's activity is no negative idleness. */
    ck_assert_int_eq(metrics_idle_ms(a, 98000), 0);
    /* A dead worker's busy mark is stale; its last activity still counts: the pool was
     * active then (a worker that exits first must not make the pool look idle longer). */
    metrics_busy(b, true);
    end_child(other);
    ck_assert_int_eq(metrics_idle_ms(a, 100000), 1000);
    metrics_close(a);
    metrics_close(b);
}
END_TEST

START_TEST(a_claim_clears_a_dead_process_busy_mark)
{
    metrics *a = open_ok(1, 1);
    pid_t dead = live_child();
    ck_assert(metrics_claim(a, dead));
    metrics_busy(a, true); /* it died in the middle of a request */
    end_child(dead);
    metrics *b = open_ok(1, 1);
    ck_assert(metrics_claim(b, getpid())); /* its replacement takes the slot */
    metrics_active(b, 5000);
    ck_assert_int_eq(metrics_idle_ms(b, 7000), 2000);
    metrics_close(a);
    metrics_close(b);
}
END_TEST

START_TEST(the_lowest_live_slot_leads)
{
    metrics *a = open_ok(1, 1), *b = open_ok(1, 1), *c = open_ok(1, 1);
    ck_assert(!metrics_leads(c)); /* no slot: never */
    pid_t first = live_child(), second = live_child();
    ck_assert(metrics_claim(a, first));
    ck_assert(metrics_claim(b, second));
    ck_assert(metrics_claim(c, getpid()));
    ck_assert(metrics_leads(a));
    ck_assert(!metrics_leads(b));
    ck_assert(!metrics_leads(c));
    /* When the leader dies, the next live slot leads: exactly one at a time. */
    end_child(first);
    ck_assert(metrics_leads(b));
    ck_assert(!metrics_leads(c));
    end_child(second);
    ck_assert(metrics_leads(c));
    metrics_close(a);
    metrics_close(b);
    metrics_close(c);
}
END_TEST

Suite *metrics_suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("shared");
    tcase_add_checked_fixture(tc, make_dir, remove_dir);
    /* A full table is 512 live processes: give a loaded machine time to fork them. */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, sums_the_slots_of_every_process);
    tcase_add_test(tc, a_dead_process_slot_is_reclaimed_with_its_counts);
    tcase_add_test(tc, what_each_process_serves_is_seen_by_the_others);
    tcase_add_test(tc, claiming_twice_keeps_one_slot);
    tcase_add_test(tc, counts_before_a_claim_stay_private);
    tcase_add_test(tc, another_layout_gets_a_fresh_file);
    tcase_add_test(tc, a_damaged_file_is_replaced);
    tcase_add_test(tc, an_unusable_path_is_an_error);
    tcase_add_test(tc, a_full_table_leaves_the_claim_private);
    tcase_add_test(tc, the_pool_is_idle_only_when_every_live_process_is);
    tcase_add_test(tc, a_claim_clears_a_dead_process_busy_mark);
    tcase_add_test(tc, the_lowest_live_slot_leads);
    suite_add_tcase(s, tc);
    return s;
}
