/* key_budget: the host's shared memory of API keys and their rate budgets (key_budget.h),
 * apart from auth.c so that its arithmetic (blocks taken, given back, a window shared between
 * hosts) is unit tested without PostgreSQL or a worker. */
#include "key_budget.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define KB_MAGIC 0x6b65796275646731ULL /* "keybudg1" */
/* A key's slot is one of this many after the one its hash names. */
#define PROBES 16
/* Spins on a slot's lock before asking whether its holder is still alive. */
#define SPINS_BEFORE_CHECK 1000

typedef struct {
    uint64_t magic;
    uint64_t host_id;
    _Atomic uint64_t generation;
    uint32_t slots;
    /* One lock for the table, held for a few dozen instructions at a time: the pid of
     * the process that holds it, 0: free. */
    _Atomic int32_t lock;
} kb_header;

typedef struct {
    bool used_slot; /* hash names a key */
    bool has_row;
    bool shared; /* the window is shared with another host: one request at a time */
    uint8_t hash[KEY_BUDGET_HASH_LEN];
    int64_t key_id; /* the key's id once the database named it, else 0 */
    uint64_t row_generation;
    key_row row;
    int64_t window;      /* the window of the counts below */
    int64_t incarnation; /* of the window's row in rate_counters, 0: not seen yet */
    long used;           /* requests this host admitted in the window */
    long avail;          /* requests taken from the database and not used yet */
    long blocks;         /* blocks taken in the window and not given back (rate_counters.lent) */
} kb_slot;

struct key_budget {
    kb_header header;
    kb_slot slot[];
};

size_t key_budget_size(unsigned slots)
{
    return sizeof(key_budget) + (size_t)slots * sizeof(kb_slot);
}

key_budget *key_budget_attach(void *memory, unsigned slots, uint64_t host_id)
{
    key_budget *kb = memory;
    /* The file's creator zeroed it under its lock (app/api/ops/metrics): any worker may be first;
     * a compare-and-swap on the host id makes one of them name the host. */
    _Atomic uint64_t *host = (_Atomic uint64_t *)&kb->header.host_id;
    uint64_t none = 0;
    atomic_compare_exchange_strong(host, &none, host_id == 0 ? 1 : host_id);
    kb->header.magic = KB_MAGIC;
    kb->header.slots = slots;
    return kb;
}

uint64_t key_budget_host(const key_budget *kb)
{
    return atomic_load((_Atomic uint64_t *)&kb->header.host_id);
}

uint64_t key_budget_generation(const key_budget *kb)
{
    return atomic_load((_Atomic uint64_t *)&kb->header.generation);
}

void key_budget_invalidate(key_budget *kb)
{
    atomic_fetch_add(&kb->header.generation, 1);
}

long key_budget_block(long limit)
{
    long block = limit / 16;
    if (block > 1000)
        block = 1000;
    return block < 1 ? 1 : block;
}

static bool process_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

/* The table's lock. A worker killed while holding it (its critical sections are a few
 * dozen instructions long) leaves its pid behind: the next worker takes the lock over. */
static void table_lock(key_budget *kb)
{
    _Atomic int32_t *lock = &kb->header.lock;
    int32_t me = (int32_t)getpid();
    for (unsigned spins = 0;; spins++) {
        int32_t free_lock = 0;
        if (atomic_compare_exchange_weak(lock, &free_lock, me))
            return;
        if (spins % SPINS_BEFORE_CHECK == SPINS_BEFORE_CHECK - 1) {
            int32_t holder = atomic_load(lock);
            if (holder != 0 && holder != me && process_gone(holder) &&
                atomic_compare_exchange_strong(lock, &holder, me))
                return;
            if (holder == me) /* a lock of ours left by a death before our pid's reuse */
                return;
            sched_yield();
        }
    }
}

static void table_unlock(key_budget *kb)
{
    atomic_store(&kb->header.lock, 0);
}

void key_budget_lock(key_budget *kb)
{
    table_lock(kb);
}

static uint64_t hash_start(const uint8_t *hash)
{
    uint64_t h;
    memcpy(&h, hash, sizeof h);
    return h;
}

/* The slot of hash (the table locked): the key's own, else a free one or one of a past
 * window (its key's budget there is void), claimed for it. NULL when every probed slot
 * holds another key's current window: the request then goes to the database alone. */
static kb_slot *slot_for(key_budget *kb, const uint8_t *hash, int64_t window)
{
    unsigned n = kb->header.slots;
    uint64_t start = hash_start(hash);
    kb_slot *spare = NULL;
    for (unsigned i = 0; i < PROBES && i < n; i++) {
        kb_slot *s = &kb->slot[(start + i) % n];
        if (s->used_slot && memcmp(s->hash, hash, KEY_BUDGET_HASH_LEN) == 0)
            return s;
        if (spare == NULL && (!s->used_slot || s->window < window - 1))
            spare = s;
    }
    if (spare != NULL) {
        memset(spare, 0, sizeof *spare);
        spare->used_slot = true;
        memcpy(spare->hash, hash, KEY_BUDGET_HASH_LEN);
        spare->window = window;
    }
    return spare;
}

/* A new window starts with nothing used, held or shared. */
static void slot_enter_window(kb_slot *s, int64_t window)
{
    if (s->window == window)
        return;
    s->window = window;
    s->used = 0;
    s->avail = 0;
    s->blocks = 0;
    s->shared = false;
    s->incarnation = 0;
}

static long left(long limit, long used)
{
    return used >= limit ? 0 : limit - used;
}

kb_verdict key_budget_take(key_budget *kb, const uint8_t *hash, int64_t window, long limit,
                           int64_t now_ms, bool count, kb_answer *out)
{
    memset(out, 0, sizeof *out);
    out->want = 1;
    table_lock(kb);
    kb_slot *s = slot_for(kb, hash, window);
    if (s == NULL) {
        table_unlock(kb);
        return KB_ASK;
    }
    slot_enter_window(s, window);
    bool row_kept = s->has_row && s->row_generation == key_budget_generation(kb) &&
                    (s->row.expires_ms == 0 || now_ms < s->row.expires_ms);
    kb_verdict verdict = KB_ASK;
    if (row_kept && !s->shared) {
        if (!count) {
            verdict = KB_ADMIT; /* a read: nothing taken */
            out->remaining = left(limit, s->used);
        } else if (s->avail > 0) {
            s->avail--;
            s->used++;
            verdict = KB_ADMIT;
            out->remaining = left(limit, s->used);
        }
    }
    if (verdict != KB_ASK)
        out->row = s->row;
    out->row_fresh = row_kept;
    out->want = s->shared ? 1 : key_budget_block(limit);
    table_unlock(kb);
    return verdict;
}

kb_stored key_budget_store(key_budget *kb, const uint8_t *hash, uint64_t generation,
                           const key_row *row, int64_t window, int64_t incarnation, long limit,
                           bool count_asked, long granted, long count, bool shared)
{
    kb_stored out = {.verdict = granted > 0 || !count_asked ? KB_ADMIT : KB_REFUSE,
                     .remaining = left(limit, count)};
    table_lock(kb);
    kb_slot *s = slot_for(kb, hash, window);
    if (s == NULL) { /* nowhere to keep a budget: return any beyond this request */
        table_unlock(kb);
        if (granted > 1) {
            out.give_back = granted - 1;
            out.blocks = 1;
        }
        return out;
    }
    slot_enter_window(s, window);
    if (incarnation != 0 && s->incarnation != incarnation) {
        /* Not the row this host took from: it was deleted, or the database failed over
         * (rate_counters is unlogged). PostgreSQL's count is the window's. */
        if (s->incarnation != 0) {
            s->used = count > granted ? count - granted : 0;
            s->avail = 0;
            s->blocks = 0;
            s->shared = false;
        }
        s->incarnation = incarnation;
    }
    s->key_id = row->key_id;
    if (generation == key_budget_generation(kb)) {
        s->row = *row;
        s->row_generation = generation;
        s->has_row = true;
    }
    if (shared && !s->shared) { /* another host takes from this window too */
        s->shared = true;
        out.give_back = s->avail;
        out.blocks = s->blocks;
        s->avail = 0;
        s->blocks = 0;
    }
    if (!count_asked) {
        if (!s->shared)
            out.remaining = left(limit, s->used);
    } else if (granted > 0) {
        s->used++;
        if (granted > 1 && s->shared) {
            out.give_back += granted - 1;
            out.blocks += 1;
        } else if (granted > 1) {
            s->avail += granted - 1;
            s->blocks++;
        }
        if (!s->shared)
            out.remaining = left(limit, s->used);
    } else if (!s->shared && s->avail > 0) {
        /* Over the limit in the database, but another worker of this host took a block
         * meanwhile: that budget is this request's. */
        s->avail--;
        s->used++;
        out.verdict = KB_ADMIT;
        out.remaining = left(limit, s->used);
    } else {
        out.remaining = 0;
    }
    table_unlock(kb);
    return out;
}

bool key_budget_settle(key_budget *kb, int64_t key_id, int64_t window, long *unused, long *blocks)
{
    *unused = 0;
    *blocks = 0;
    bool found = false;
    table_lock(kb); /* a scan of the whole table: rare (a window shared by two hosts) */
    for (unsigned i = 0; i < kb->header.slots; i++) {
        kb_slot *s = &kb->slot[i];
        if (!s->used_slot || s->key_id != key_id || s->window != window)
            continue;
        s->shared = true;
        found = found || s->blocks > 0 || s->avail > 0;
        *unused += s->avail;
        *blocks += s->blocks;
        s->avail = 0;
        s->blocks = 0;
    }
    table_unlock(kb);
    return found;
}
