/* seed: the catalogue in parallel slices.
 *
 * Most of a seed's time is the server's: generated columns, eight indexes, CHECKs and
 * foreign keys for every row, all in the one backend process that serves a connection.
 * So the catalogue is cut into slices of consecutive product numbers, each written by a
 * worker process with a connection and a transaction of its own, so that as many
 * backends work at once. Processes rather than threads: the helpers of sql.c end the
 * process on any error, which is exactly right for a worker (its connection closes and
 * its transaction rolls back) and would take every thread down at once.
 *
 * The slices commit together: a worker reports its counts when its rows are written and
 * then waits, its transaction open, for the main process to tell it to commit. The main
 * process does so only when every worker has reported; if one fails, it kills the others
 * before any commits, so nothing of the catalogue remains. A worker dies with the main
 * process, and gives up if its go pipe closes. Without two-phase commit, the commits
 * themselves are separate: a connection lost between them leaves the slices committed
 * before it, which seed --replace clears.
 *
 * A worker's standard error goes to a pipe, so that the command still prints one line
 * when it fails: the first failed worker's. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admin.h"
#include "seed.h"

typedef struct {
    seed_slice slice;
    seed_counts counts; /* as reported */
    pid_t pid;
    int report; /* read end: the worker's counts, once its rows are all written */
    int go;     /* write end: a byte tells the worker to commit */
    int errors; /* read end: the worker's standard error */
    int status; /* once ended */
    bool ready; /* counts received */
    bool ended; /* reaped */
} worker;

/* --- in the worker ---------------------------------------------------------------------- */

static noreturn void worker_main(const seed_plan *plan, seed_slice s, pid_t main_pid, int report,
                                 int go)
{
    /* Killed with the main process, rather than writing a slice nobody will commit (and
     * gone already if the main process died before this was set). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != main_pid)
        _exit(EXIT_FAILURE);
    market_config cfg;
    db *c = admin_connect(0, &cfg);
    /* Waiting for the other slices is idle time in a transaction: a limit on it set for
     * the role or the server must not end this one. */
    sql_do(c, "seed", "SELECT set_config('idle_in_transaction_session_timeout', '0', false)", 0,
           NULL);
    sql_begin(c, "seed", DB_READ_COMMITTED);
    seed_counts counts = {0};
    seed_write_slice(c, plan, s, &counts);
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
    sql_commit(c, what);
    db_close(c);
    _exit(EXIT_SUCCESS);
}

/* --- in the main process ----------------------------------------------------------------- */

static void open_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        fail("seed: pipe: %s", strerror(errno));
}

static void close_worker_ends(const worker *w)
{
    close(w->report);
    close(w->go);
    close(w->errors);
}

/* started holds the workers forked before this one: the new worker closes their pipes,
 * so that each worker's go pipe closes when the main process dies. */
static void start_worker(const seed_plan *plan, worker *w, const worker *started, int nstarted)
{
    int report[2], go[2], errors[2];
    pid_t main_pid = getpid();
    open_pipe(report);
    open_pipe(go);
    open_pipe(errors);
    fflush(NULL); /* nothing buffered gets written twice */
    w->pid = fork();
    if (w->pid < 0)
        fail("seed: fork: %s", strerror(errno));
    if (w->pid == 0) {
        for (int i = 0; i < nstarted; i++)
            close_worker_ends(&started[i]);
        close(report[0]);
        close(go[1]);
        close(errors[0]);
        if (dup2(errors[1], STDERR_FILENO) < 0)
            _exit(EXIT_FAILURE);
        close(errors[1]);
        worker_main(plan, w->slice, main_pid, report[1], go[0]);
    }
    close(report[1]);
    close(go[0]);
    close(errors[1]);
    w->report = report[0];
    w->go = go[1];
    w->errors = errors[0];
    w->ready = false;
    w->ended = false;
}

/* Collects the worker's exit status, waiting for it or not; true once it has ended. */
static bool reap(worker *w, bool block)
{
    if (w->ended)
        return true;
    pid_t r = waitpid(w->pid, &w->status, block ? 0 : WNOHANG);
    if (r < 0)
        w->status = 0; /* not our child any more: nothing to wait for */
    w->ended = r != 0;
    return w->ended;
}

/* Waits until every worker has reported its counts. Returns the first to end without
 * (its pipe closed), or -1. */
static int wait_ready(worker *w, int n)
{
    for (int pending = n; pending > 0;) {
        struct pollfd fds[SEED_MAX_JOBS];
        int which[SEED_MAX_JOBS], nfds = 0;
        for (int i = 0; i < n; i++) {
            if (!w[i].ready) {
                fds[nfds] = (struct pollfd){.fd = w[i].report, .events = POLLIN};
                which[nfds++] = i;
            }
        }
        if (poll(fds, (nfds_t)nfds, -1) < 0) {
            if (errno == EINTR)
                continue;
            fail("seed: poll: %s", strerror(errno));
        }
        for (int k = 0; k < nfds; k++) {
            worker *x = &w[which[k]];
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

/* Prints the failed worker's own one-line message (it already starts "market-admin:"),
 * or says how it ended, and exits. */
static noreturn void report_failure(const worker *w)
{
    char message[2048];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof message - 1 &&
           (got = read(w->errors, message + len, sizeof message - 1 - len)) > 0)
        len += (size_t)got;
    message[len] = '\0';
    if (len > 0) {
        fputs(message, stderr);
        exit(EXIT_FAILURE);
    }
    if (WIFSIGNALED(w->status))
        fail("seed: the worker for products %ld to %ld was killed by signal %d", w->slice.first,
             w->slice.last, WTERMSIG(w->status));
    fail("seed: the worker for products %ld to %ld ended without a report", w->slice.first,
         w->slice.last);
}

/* Ends every worker before it commits (their transactions roll back as their
 * connections close) and fails with the message of the one that failed. */
static noreturn void give_up(worker *w, int n, int failed)
{
    reap(&w[failed], true); /* it ends by itself: its status tells how */
    for (int i = 0; i < n; i++)
        if (!w[i].ended)
            kill(w[i].pid, SIGKILL);
    for (int i = 0; i < n; i++)
        reap(&w[i], true);
    report_failure(&w[failed]);
}

/* A worker that died after reporting (killed from outside, say) would roll back alone:
 * check them all just before the first commit, to keep that window as short as can be. */
static int first_ended(worker *w, int n)
{
    for (int i = 0; i < n; i++)
        if (reap(&w[i], false))
            return i;
    return -1;
}

static void commit_all(worker *w, int n)
{
    int ended = first_ended(w, n);
    if (ended >= 0)
        give_up(w, n, ended);
    for (int i = 0; i < n; i++)
        if (write(w[i].go, "c", 1) != 1)
            fail("seed: cannot tell the worker for products %ld to %ld to commit: %s (slices "
                 "before it have committed; seed --replace starts over)",
                 w[i].slice.first, w[i].slice.last, strerror(errno));
    for (int i = 0; i < n; i++)
        reap(&w[i], true);
    for (int i = 0; i < n; i++)
        if (!WIFEXITED(w[i].status) || WEXITSTATUS(w[i].status) != 0)
            report_failure(&w[i]);
}

static void add_counts(seed_counts *to, const seed_counts *from)
{
    to->tiers += from->tiers;
    to->files_written += from->files_written;
}

void seed_run_slices(const seed_plan *plan, seed_counts *counts)
{
    worker w[SEED_MAX_JOBS];
    int n = plan->jobs;
    /* A worker that dies makes its pipes raise SIGPIPE: an error to handle, not a death. */
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < n; i++) {
        w[i].slice.first = 1 + (long)i * plan->products / n;
        w[i].slice.last = (long)(i + 1) * plan->products / n;
        start_worker(plan, &w[i], w, i);
    }
    int failed = wait_ready(w, n);
    if (failed >= 0)
        give_up(w, n, failed);
    commit_all(w, n);
    for (int i = 0; i < n; i++) {
        add_counts(counts, &w[i].counts);
        close_worker_ends(&w[i]);
    }
}
