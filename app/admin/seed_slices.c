/* seed: the catalogue in parallel slices.
 *
 * Most of a seed's time is the server's: generated columns, eight indexes, CHECKs and
 * foreign keys for every row, all in the one backend process that serves a connection.
 * So the catalogue is cut into slices of consecutive product numbers, each written by a
 * writer process with a connection and a transaction of its own, so that as many
 * backends work at once. Processes rather than threads: the helpers of sql.c end the
 * process on any error, which is exactly right for a writer (its connection closes and
 * its transaction rolls back) and would take every thread down at once.
 *
 * The slices commit together: a writer reports its counts when its rows are written and
 * then waits, its transaction open, for the main process to tell it to commit. The main
 * process does so only when every writer has reported; if one fails, it kills the others
 * before any commits, so nothing of the catalogue remains. A writer dies with the main
 * process, and gives up if its go pipe closes. Without two-phase commit, the commits
 * themselves are separate: a connection lost between them leaves the slices committed
 * before it, which seed --replace clears.
 *
 * A writer's standard error goes to a pipe, so that the command still prints one line
 * when it fails: the first failed writer's.
 *
 * While the writers work, the main process shows their progress (progress.h) from the
 * meters they advance in a shared mapping. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admin.h"
#include "progress.h"
#include "seed.h"

/* How often the main process looks at the meters while it waits for the writers. */
#define PROGRESS_POLL_MS 250

typedef struct {
    seed_slice slice;
    seed_counts counts; /* as reported */
    pid_t pid;
    int report; /* read end: the writer's counts, once its rows are all written */
    int go;     /* write end: a byte tells the writer to commit */
    int errors; /* read end: the writer's standard error */
    int status; /* once ended */
    bool ready; /* counts received */
    bool ended; /* reaped */
} writer;

/* --- in the writer ---------------------------------------------------------------------- */

static noreturn void writer_main(const seed_plan *plan, seed_slice s, pid_t main_pid, int report,
                                 int go)
{
    /* Killed with the main process, rather than writing a slice nobody will commit (and
     * gone already if the main process died before this was set). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != main_pid)
        _exit(EXIT_FAILURE);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    /* Waiting for the other slices is idle time in a transaction: a limit on it set for
     * the role or the server must not end this one. */
    sql_do(d, "seed", "SELECT set_config('idle_in_transaction_session_timeout', '0', false)", 0,
           NULL);
    sql_begin(d, "seed", DB_READ_COMMITTED);
    seed_counts counts = {0};
    seed_write_slice(d, plan, s, &counts);
    /* Less than PIPE_BUF: written and read in one piece. */
    if (write(report, &counts, sizeof counts) != (ssize_t)sizeof counts)
        fail("seed: cannot report to the main process: %s", strerror(errno));
    char command;
    if (read(go, &command, 1) != 1)
        _exit(EXIT_FAILURE); /* the main process gave up: the transaction dies with us */
    char what[160];
    snprintf(what, sizeof what,
             "seed: committing products %ld to %ld (other slices may have committed; seed "
             "--replace starts over)",
             s.first, s.last);
    sql_commit(d, what);
    db_close(d);
    _exit(EXIT_SUCCESS);
}

/* --- in the main process ----------------------------------------------------------------- */

static void open_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        fail("seed: pipe: %s", strerror(errno));
}

static void close_writer_ends(const writer *wr)
{
    close(wr->report);
    close(wr->go);
    close(wr->errors);
}

/* started holds the writers forked before this one: the new writer closes their pipes,
 * so that each writer's go pipe closes when the main process dies. */
static void start_writer(const seed_plan *plan, writer *wr, const writer *started, int nstarted)
{
    int report[2], go[2], errors[2];
    pid_t main_pid = getpid();
    open_pipe(report);
    open_pipe(go);
    open_pipe(errors);
    fflush(NULL); /* nothing buffered gets written twice */
    wr->pid = fork();
    if (wr->pid < 0)
        fail("seed: fork: %s", strerror(errno));
    if (wr->pid == 0) {
        for (int i = 0; i < nstarted; i++)
            close_writer_ends(&started[i]);
        close(report[0]);
        close(go[1]);
        close(errors[0]);
        if (dup2(errors[1], STDERR_FILENO) < 0)
            _exit(EXIT_FAILURE);
        close(errors[1]);
        writer_main(plan, wr->slice, main_pid, report[1], go[0]);
    }
    close(report[1]);
    close(go[0]);
    close(errors[1]);
    wr->report = report[0];
    wr->go = go[1];
    wr->errors = errors[0];
    wr->ready = false;
    wr->ended = false;
}

/* Collects the writer's exit status, waiting for it or not; true once it has ended. */
static bool reap(writer *wr, bool block)
{
    if (wr->ended)
        return true;
    pid_t reaped = waitpid(wr->pid, &wr->status, block ? 0 : WNOHANG);
    if (reaped < 0)
        wr->status = 0; /* not our child any more: nothing to wait for */
    wr->ended = reaped != 0;
    return wr->ended;
}

static void show_progress(progress *p, const writer *wr, int n)
{
    long steps = 0, rows = 0;
    for (int i = 0; i < n; i++) {
        steps += atomic_load_explicit(&wr[i].slice.meter->steps, memory_order_relaxed);
        rows += atomic_load_explicit(&wr[i].slice.meter->rows, memory_order_relaxed);
    }
    progress_show(p, steps, rows);
}

/* Waits until every writer has reported its counts, showing their progress meanwhile.
 * Returns the first to end without (its pipe closed), or -1. */
static int wait_ready(writer *wr, int n, progress *p)
{
    for (int pending = n; pending > 0;) {
        struct pollfd fds[SEED_MAX_JOBS];
        int which[SEED_MAX_JOBS], nfds = 0;
        for (int i = 0; i < n; i++) {
            if (!wr[i].ready) {
                fds[nfds] = (struct pollfd){.fd = wr[i].report, .events = POLLIN};
                which[nfds++] = i;
            }
        }
        int polled = poll(fds, (nfds_t)nfds, PROGRESS_POLL_MS);
        show_progress(p, wr, n);
        if (polled < 0) {
            if (errno == EINTR)
                continue;
            fail("seed: poll: %s", strerror(errno));
        }
        for (int k = 0; k < nfds; k++) {
            writer *x = &wr[which[k]];
            if (fds[k].revents == 0)
                continue;
            if (read(x->report, &x->counts, sizeof x->counts) != (ssize_t)sizeof x->counts)
                return which[k];
            x->ready = true;
            pending--;
        }
    }
    return -1;
}

/* Prints the failed writer's own one-line message (it already starts "market-admin:"),
 * or says how it ended, and exits. */
static noreturn void report_failure(const writer *wr)
{
    char message[2048];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof message - 1 &&
           (got = read(wr->errors, message + len, sizeof message - 1 - len)) > 0)
        len += (size_t)got;
    message[len] = '\0';
    if (len > 0) {
        fputs(message, stderr);
        exit(EXIT_FAILURE);
    }
    if (WIFSIGNALED(wr->status))
        fail("seed: the writer for products %ld to %ld was killed by signal %d", wr->slice.first,
             wr->slice.last, WTERMSIG(wr->status));
    fail("seed: the writer for products %ld to %ld ended without a report", wr->slice.first,
         wr->slice.last);
}

/* Ends every writer before it commits (their transactions roll back as their
 * connections close) and fails with the message of the one that failed. */
static noreturn void give_up(writer *wr, int n, int failed)
{
    reap(&wr[failed], true); /* it ends by itself: its status tells how */
    for (int i = 0; i < n; i++)
        if (!wr[i].ended)
            kill(wr[i].pid, SIGKILL);
    for (int i = 0; i < n; i++)
        reap(&wr[i], true);
    report_failure(&wr[failed]);
}

/* A writer that died after reporting (killed from outside, say) would roll back alone:
 * check them all just before the first commit, to keep that window as short as can be. */
static int first_ended(writer *wr, int n)
{
    for (int i = 0; i < n; i++)
        if (reap(&wr[i], false))
            return i;
    return -1;
}

static void commit_all(writer *wr, int n)
{
    int ended = first_ended(wr, n);
    if (ended >= 0)
        give_up(wr, n, ended);
    for (int i = 0; i < n; i++)
        if (write(wr[i].go, "c", 1) != 1)
            fail("seed: cannot tell the writer for products %ld to %ld to commit: %s (slices "
                 "before it have committed; seed --replace starts over)",
                 wr[i].slice.first, wr[i].slice.last, strerror(errno));
    for (int i = 0; i < n; i++)
        reap(&wr[i], true);
    for (int i = 0; i < n; i++)
        if (!WIFEXITED(wr[i].status) || WEXITSTATUS(wr[i].status) != 0)
            report_failure(&wr[i]);
}

static void add_counts(seed_counts *to, const seed_counts *from)
{
    to->tiers += from->tiers;
    to->files_written += from->files_written;
}

/* The writers' meters: shared with them, so mapped before they are forked. */
static seed_meter *map_meters(int n)
{
    void *m = mmap(NULL, sizeof(seed_meter) * (size_t)n, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        fail("seed: mmap: %s", strerror(errno));
    return m; /* zero-filled */
}

void seed_run_slices(const seed_plan *plan, seed_counts *counts)
{
    writer wr[SEED_MAX_JOBS];
    int n = plan->jobs;
    seed_meter *meters = map_meters(n);
    /* A writer that dies makes its pipes raise SIGPIPE: an error to handle, not a death. */
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < n; i++) {
        wr[i].slice.first = 1 + (long)i * plan->products / n;
        wr[i].slice.last = (long)(i + 1) * plan->products / n;
        wr[i].slice.meter = &meters[i];
        start_writer(plan, &wr[i], wr, i);
    }
    progress p;
    progress_begin(&p, "seed: catalogue", plan->products * SEED_PASSES(plan));
    int failed = wait_ready(wr, n, &p);
    if (failed >= 0) {
        progress_abandon(&p);
        give_up(wr, n, failed);
    }
    long rows = 0;
    for (int i = 0; i < n; i++)
        rows += atomic_load_explicit(&meters[i].rows, memory_order_relaxed);
    progress_end(&p, rows);
    commit_all(wr, n);
    for (int i = 0; i < n; i++) {
        add_counts(counts, &wr[i].counts);
        close_writer_ends(&wr[i]);
    }
    munmap(meters, sizeof(seed_meter) * (size_t)n);
}
