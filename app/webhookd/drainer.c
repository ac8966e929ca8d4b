/* drainer: the one loop of market-webhookd and the life of a job in it (claim, resolve,
 * sign, send, record), so that what happens to a delivery reads top to bottom in one file.
 * What needs no loop lives beside it and is tested alone (target.c, retry.c, duetimes.c);
 * the database, HTTP and DNS are store.c's, sender.c's and lib/resolver.c's. */
#include "drainer.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "crypto.h"
#include "duetimes.h"
#include "log.h"
#include "mem.h"
#include "retry.h"
#include "target.h"
#include "webhook_sign.h"

#define POLL_MS 1000       /* fallback: look for due deliveries at least this often */
#define STOP_GRACE_MS 5000 /* after the timeout, time left to record outcomes */
#define RETRY_SLACK_MS 20  /* look for a retry this long after it is due */

/* A job resolves its host (names only), then sends, then waits for its outcome to be
 * recorded. */
typedef enum { JOB_FREE, JOB_RESOLVING, JOB_SENDING, JOB_DONE } job_state;

typedef struct {
    job_state state;
    delivery d;
    attempt a;
    target t;
    char signature[128]; /* one or two "v1,<base64 of 32 bytes>" (47 bytes each) */
    char host[TARGET_HOST_MAX];
    double started_at;    /* when this attempt began, its lookup included */
    long long started_ms; /* the same, monotonic: the attempt's timeout counts from here */
} job;

typedef struct {
    const drainer_setup *setup;
    job *jobs;
    int free_slots;
    bool wake; /* due deliveries may be waiting: claim as soon as a slot is free */
    bool stopping;
    long long next_poll_ms;
    long long next_renew_ms; /* when the leases of held deliveries are extended next */
    long long stop_deadline_ms;
    duetimes retries;        /* when our own failed deliveries come due again */
    store_outcome *outcomes; /* scratch for record_done, one per slot */
    int *outcome_job;
    long long delivered, retrying, failed; /* outcomes recorded, for the last log line */
    long long ended;                       /* deliveries ended unsent (subscription deleted) */
    struct pollfd *waitfds;                /* what the last wait waited on */
    unsigned capwait;
    unsigned dns_first, dns_count; /* the resolver's part of waitfds */
    int dns_reloads;               /* resolver_reloads already logged */
} drainer;

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Marks a job finished without a request: nothing was sent. */
static void fail_unsent(job *j, const char *why, bool final)
{
    memset(&j->a, 0, sizeof j->a);
    j->a.started_at = j->started_at;
    j->a.duration_ms = (long)(clock_ms() - j->started_ms);
    j->a.final = final;
    strncpy(j->a.error, why, sizeof j->a.error - 1);
    j->state = JOB_DONE;
}

/* Opens one sealed secret and appends its signature of this attempt to sig. */
static bool sign_with(const drainer *dr, const job *j, const char *sealed, long long ts, buf *sig)
{
    buf secret;
    buf_init(&secret, 64);
    bool ok = crypto_open(dr->setup->secret_key, sealed, &secret);
    uint8_t key[WEBHOOK_KEY_MAX];
    size_t keylen = 0;
    ok = ok && webhook_secret_key(secret.data, key, &keylen);
    explicit_bzero(secret.data, secret.cap);
    buf_free(&secret);
    if (ok)
        webhook_sign(key, keylen, j->d.event_id, ts, j->d.body, strlen(j->d.body), sig);
    explicit_bzero(key, sizeof key);
    return ok;
}

/* Signs this attempt with the subscription's secret and, while a rotated-out secret still
 * signs, with that one too: "v1,<new> v1,<old>", the list Standard Webhooks receivers read
 * (any one matching signature verifies). */
static bool sign_job(const drainer *dr, job *j, long long ts)
{
    buf sig;
    buf_init(&sig, sizeof j->signature);
    bool ok = sign_with(dr, j, j->d.secret_sealed, ts, &sig);
    if (ok && j->d.previous_secret_sealed != NULL) {
        buf_putc(&sig, ' ');
        ok = sign_with(dr, j, j->d.previous_secret_sealed, ts, &sig);
    }
    if (ok)
        snprintf(j->signature, sizeof j->signature, "%s", sig.data);
    buf_free(&sig);
    return ok;
}

static void release_job(drainer *dr, job *j);

/* Asks the database whether the job's attempt may be sent now (store_begin_send), and
 * deals with every other answer: a disabled subscription fails the attempt unsent, a
 * deleted one has ended the delivery as endpoint_deleted, a delivery no longer ours or a
 * database out of reach frees the slot (the lease runs out; another attempt follows). */
static bool may_send(drainer *dr, int slot)
{
    job *j = &dr->jobs[slot];
    switch (store_begin_send(dr->setup->outbox, j->d.id)) {
    case STORE_SEND_GO:
        return true;
    case STORE_SEND_DISABLED:
        fail_unsent(j, "subscription disabled", true);
        return false;
    case STORE_SEND_DELETED:
        log_info("delivery %lld event %s subscription %s: subscription deleted, ended unsent",
                 j->d.id, j->d.event_id, j->d.subscription_id);
        dr->ended++;
        break;
    case STORE_SEND_ENDED:
        dr->ended++;
        break;
    case STORE_SEND_DOWN:
        break;
    }
    release_job(dr, j);
    return false;
}

/* Signs a job whose target passed its checks and hands it to libcurl, with what is left
 * of the attempt's time (its lookup took the rest), or fails it at once. The database has
 * the last word first (may_send). */
static void send_job(drainer *dr, int slot)
{
    job *j = &dr->jobs[slot];
    char err[128];
    if (!may_send(dr, slot))
        return;
    long left = dr->setup->cfg->webhook_timeout * 1000 - (long)(clock_ms() - j->started_ms);
    if (left <= 0) {
        fail_unsent(j, "timed out: resolving the host took the attempt's whole time", false);
        return;
    }
    long long ts = (long long)time(NULL);
    if (!sign_job(dr, j, ts)) {
        fail_unsent(j, "subscription secret does not open (server secret changed?)", false);
        return;
    }
    sender_request req = {j->t.url,          j->t.request_target, j->t.resolve, j->d.body,
                          strlen(j->d.body), j->d.event_id,       ts,           j->signature,
                          j->started_at,     j->started_ms,       left};
    if (!sender_start(dr->setup->http, slot, &req, err, sizeof err)) {
        fail_unsent(j, err, false);
        return;
    }
    j->state = JOB_SENDING;
}

/* Starts one claimed delivery's attempt: a literal address is checked and sent at once,
 * a name is handed to the resolver (continue_resolved goes on with it), anything else
 * fails the attempt. */
static void start_job(drainer *dr, int slot)
{
    job *j = &dr->jobs[slot];
    char err[128];
    j->host[0] = '\0';
    j->started_at = wall_seconds();
    j->started_ms = clock_ms();
    /* Not enabled when claimed: no lookup for it, unless it was enabled again since. */
    if (!j->d.enabled && !may_send(dr, slot))
        return;
    bool parsed = target_parse(j->d.url, &j->t, err, sizeof err);
    snprintf(j->host, sizeof j->host, "%s", j->t.host);
    if (!parsed) {
        fail_unsent(j, err, false);
        return;
    }
    if (!j->t.literal) {
        j->state = JOB_RESOLVING;
        resolver_lookup(dr->setup->dns, j->t.host, slot);
        return;
    }
    if (!target_check_literal(&j->t, dr->setup->cfg->webhook_allow_private, err, sizeof err)) {
        fail_unsent(j, err, false);
        return;
    }
    send_job(dr, slot);
}

/* Goes on with the jobs whose host's lookup ended: every address of the answer is
 * checked, and the job is sent to exactly those, or its attempt fails. */
static void continue_resolved(drainer *dr)
{
    int slot;
    resolver_answer answer;
    char err[128];
    while (resolver_next_done(dr->setup->dns, &slot, &answer)) {
        job *j = &dr->jobs[slot];
        if (answer.status != RESOLVER_OK)
            fail_unsent(j, answer.error, false);
        else if (!target_pin(&j->t, answer.addrs, answer.count,
                             dr->setup->cfg->webhook_allow_private, err, sizeof err))
            fail_unsent(j, err, false);
        else
            send_job(dr, slot);
    }
}

/* Says when the resolver read a changed /etc/resolv.conf (at a lookup's start), and
 * which servers it uses now. */
static void log_dns_reload(drainer *dr)
{
    int reloads = resolver_reloads(dr->setup->dns);
    if (reloads == dr->dns_reloads)
        return;
    dr->dns_reloads = reloads;
    char servers[256];
    resolver_servers(dr->setup->dns, servers, sizeof servers);
    log_info("%s changed: read again, DNS servers %s", RESOLVER_CONF, servers);
}

/* Claims as many due deliveries as there are free slots and starts them. */
static void claim_and_start(drainer *dr)
{
    int want = dr->free_slots;
    delivery *batch = xcalloc((size_t)want, sizeof *batch);
    int got = store_claim(dr->setup->outbox, want, batch);
    dr->next_poll_ms = clock_ms() + POLL_MS;
    /* A full batch means more may be due; otherwise wait for a notification or the
     * next poll. */
    dr->wake = got == want;
    for (int i = 0, slot = 0; i < got; i++) {
        while (dr->jobs[slot].state != JOB_FREE)
            slot++;
        dr->jobs[slot].d = batch[i];
        dr->free_slots--;
        start_job(dr, slot);
    }
    free(batch);
}

static void log_failure(const job *j, const retry_outcome *o)
{
    char what[ATTEMPT_ERROR_MAX + 32];
    if (j->a.error[0] != '\0')
        snprintf(what, sizeof what, "%s", j->a.error);
    else
        snprintf(what, sizeof what, "HTTP %ld", j->a.http_status);
    char next[48];
    if (strcmp(o->status, "pending") == 0)
        snprintf(next, sizeof next, "retry in %.1fs", (double)o->delay_ms / 1000.0);
    else
        snprintf(next, sizeof next, "giving up");
    log_error("delivery %lld event %s subscription %s host %s attempt %d failed: %s; %s", j->d.id,
              j->d.event_id, j->d.subscription_id, j->host[0] ? j->host : "-", j->d.attempt, what,
              next);
}

static void release_job(drainer *dr, job *j)
{
    delivery_free(&j->d);
    target_free(&j->t);
    j->state = JOB_FREE;
    dr->free_slots++;
}

static void count_outcome(drainer *dr, const char *status)
{
    if (strcmp(status, "delivered") == 0)
        dr->delivered++;
    else if (strcmp(status, "pending") == 0)
        dr->retrying++;
    else
        dr->failed++;
}

/* Writes the outcomes of all finished jobs at once; a job whose outcome cannot be written
 * now (database down) keeps its slot and is tried again on the next turn. */
static void record_done(drainer *dr)
{
    const market_config *cfg = dr->setup->cfg;
    int n = 0;
    for (int i = 0; i < dr->setup->concurrency; i++) {
        job *j = &dr->jobs[i];
        if (j->state != JOB_DONE)
            continue;
        uint32_t draw;
        crypto_random(&draw, sizeof draw);
        retry_outcome o = retry_decide(j->a.ok, j->a.final, j->d.attempt, cfg->webhook_retries,
                                       cfg->webhook_retry_count, (double)draw / 4294967296.0);
        dr->outcomes[n] = (store_outcome){&j->d, &j->a, o.status, o.delay_ms, STORE_DOWN};
        dr->outcome_job[n++] = i;
    }
    store_record_all(dr->setup->outbox, dr->outcomes, n);
    for (int k = 0; k < n; k++) {
        const store_outcome *o = &dr->outcomes[k];
        job *j = &dr->jobs[dr->outcome_job[k]];
        if (o->result == STORE_DOWN)
            continue;
        retry_outcome ro = {o->status, o->retry_ms};
        if (!j->a.ok)
            log_failure(j, &ro);
        count_outcome(dr, o->status);
        if (strcmp(o->status, "pending") == 0)
            duetimes_add(&dr->retries, clock_ms() + o->retry_ms + RETRY_SLACK_MS);
        release_job(dr, j);
    }
}

static void collect_finished(drainer *dr)
{
    int slot;
    attempt a;
    sender_perform(dr->setup->http);
    while (sender_next_done(dr->setup->http, &slot, &a)) {
        dr->jobs[slot].a = a;
        dr->jobs[slot].state = JOB_DONE;
    }
}

static bool any_done(const drainer *dr)
{
    for (int i = 0; i < dr->setup->concurrency; i++)
        if (dr->jobs[i].state == JOB_DONE)
            return true;
    return false;
}

static void check_signal(drainer *dr)
{
    /* Drain the pipe whole (it is non-blocking): a byte left in it would make every wait
     * return at once. */
    char c[16];
    bool signalled = false;
    while (read(dr->setup->signal_fd, c, sizeof c) > 0)
        signalled = true;
    if (!signalled || dr->stopping)
        return;
    dr->stopping = true;
    dr->stop_deadline_ms = clock_ms() + dr->setup->cfg->webhook_timeout * 1000 + STOP_GRACE_MS;
    log_info("stopping: %d request(s) in flight, %d name(s) being resolved",
             sender_in_flight(dr->setup->http), resolver_waiting(dr->setup->dns));
}

/* How long the wait may last: not at all if work is ready; with no free slot, until
 * libcurl has news (curl_multi_poll also wakes for its own timers); else until the next
 * poll or retry. wait_for_events shortens it to the resolver's next timer. */
static int delivery_wait_ms(const drainer *dr, bool db_up)
{
    if (!db_up)
        return POLL_MS / 4; /* reconnect soon */
    if (any_done(dr) || (dr->wake && dr->free_slots > 0 && !dr->stopping))
        return 0;
    if (dr->free_slots == 0 || dr->stopping)
        return POLL_MS;
    long long next = dr->next_poll_ms, retry = duetimes_next(&dr->retries);
    if (retry >= 0 && retry < next)
        next = retry;
    long long left = next - clock_ms();
    return left < 0 ? 0 : left > POLL_MS ? POLL_MS : (int)left;
}

/* The deliveries' wait, shortened to when the retention pass has its next step (its
 * answers wake the wait through its socket). */
static int wait_ms(const drainer *dr, bool db_up)
{
    int ms = delivery_wait_ms(dr, db_up);
    long long pruning = dr->stopping ? -1 : retention_wait_ms(dr->setup->retention);
    return pruning >= 0 && pruning < ms ? (int)pruning : ms;
}

/* One wait for everything: libcurl's sockets, the signal pipe, the database's socket, the
 * retention pass's socket and c-ares' sockets (whose revents resolver_process reads after
 * the wait). */
static void wait_for_events(drainer *dr, bool db_up)
{
    resolver *dns = dr->setup->dns;
    unsigned cap = 3 + resolver_nfds(dns);
    if (cap > dr->capwait) {
        dr->waitfds = xrealloc(dr->waitfds, cap * sizeof *dr->waitfds);
        dr->capwait = cap;
    }
    unsigned n = 0;
    dr->waitfds[n++] = (struct pollfd){.fd = dr->setup->signal_fd, .events = POLLIN};
    int pgfd = store_socket(dr->setup->outbox);
    if (pgfd >= 0)
        dr->waitfds[n++] = (struct pollfd){.fd = pgfd, .events = POLLIN};
    int prunefd = retention_socket(dr->setup->retention);
    if (prunefd >= 0 && !dr->stopping)
        dr->waitfds[n++] = (struct pollfd){.fd = prunefd, .events = POLLIN};
    dr->dns_first = n;
    dr->dns_count = resolver_wait_fds(dns, dr->waitfds + n, cap - n);
    n += dr->dns_count;
    sender_wait(dr->setup->http, dr->waitfds, n, resolver_wait_ms(dns, wait_ms(dr, db_up)));
}

/* After a wait: c-ares reads its answers, retransmits and expires lookups, and the jobs
 * whose lookup ended go on. */
static void resolve_step(drainer *dr)
{
    resolver_process(dr->setup->dns, dr->waitfds + dr->dns_first, dr->dns_count);
    dr->dns_count = 0;
    continue_resolved(dr);
}

static bool finished(drainer *dr)
{
    if (!dr->stopping)
        return false;
    if (dr->free_slots == dr->setup->concurrency)
        return true;
    if (clock_ms() < dr->stop_deadline_ms)
        return false;
    /* The database stayed away: these deliveries are sent again once their lease
     * runs out (at least once). */
    log_error("stopping with %d outcome(s) unrecorded", dr->setup->concurrency - dr->free_slots);
    return true;
}

/* While this drainer holds deliveries (sending, or sent with the outcome not yet
 * recorded), their leases are extended every DRAINER_RENEW_MS. */
static void renew_leases(drainer *dr)
{
    long long now = clock_ms();
    if (dr->free_slots == dr->setup->concurrency) {
        dr->next_renew_ms = now + DRAINER_RENEW_MS; /* a new claim starts a fresh lease */
        return;
    }
    if (now < dr->next_renew_ms)
        return;
    if (store_renew(dr->setup->outbox))
        dr->next_renew_ms = now + DRAINER_RENEW_MS;
}

/* A claim is due on a notification (or a full last batch), at a retry's due time and at
 * the one-second poll. */
static bool claim_due(drainer *dr)
{
    long long now = clock_ms();
    bool retry_due = duetimes_pop_due(&dr->retries, now);
    return dr->wake || retry_due || now >= dr->next_poll_ms;
}

void drainer_run(const drainer_setup *setup)
{
    /* wake: whatever was committed while no drainer ran is due at once. */
    drainer dr = {.setup = setup, .free_slots = setup->concurrency, .wake = true};
    duetimes_init(&dr.retries);
    size_t n = (size_t)setup->concurrency;
    dr.jobs = xcalloc(n, sizeof *dr.jobs);
    dr.outcomes = xcalloc(n, sizeof *dr.outcomes);
    dr.outcome_job = xcalloc(n, sizeof *dr.outcome_job);
    dr.capwait = 2;
    dr.waitfds = xcalloc(dr.capwait, sizeof *dr.waitfds);
    while (!finished(&dr)) {
        check_signal(&dr);
        bool db_up = store_ready(setup->outbox);
        if (db_up && store_notified(setup->outbox))
            dr.wake = true;
        resolve_step(&dr);
        collect_finished(&dr);
        if (db_up) {
            record_done(&dr);
            renew_leases(&dr);
        }
        if (db_up && !dr.stopping && dr.free_slots > 0 && claim_due(&dr)) {
            claim_and_start(&dr);
            log_dns_reload(&dr);
            continue_resolved(&dr); /* names found in /etc/hosts are answered at once */
            collect_finished(&dr);
        }
        if (!dr.stopping)
            retention_step(setup->retention);
        if (finished(&dr))
            break;
        wait_for_events(&dr, store_ready(setup->outbox));
    }
    log_info("drained: %lld delivered, %lld to retry, %lld failed, %lld ended unsent", dr.delivered,
             dr.retrying, dr.failed, dr.ended);
    duetimes_free(&dr.retries);
    free(dr.waitfds);
    free(dr.outcome_job);
    free(dr.outcomes);
    free(dr.jobs);
}
