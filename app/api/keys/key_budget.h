/* key_budget: what the workers of one host share about API keys, so that most requests
 * need no statement for their key (docs/contract.md section 3):
 *
 *   - each key's row (id, account, mode, access, expiry), kept until the keys' generation
 *     changes: every change of api_keys notifies the workers (016_host_budgets.sql), and
 *     the first worker to see it calls key_budget_invalidate;
 *   - the key's budget in the current rate-limit window: requests the host took from
 *     PostgreSQL in a block (one statement for many requests) and has not used yet, and
 *     how many the host admitted in the window.
 *
 * PostgreSQL stays the arbiter: rate_counters.count is every request granted to a host,
 * used or not. While one host alone holds a key's window, it takes blocks and its own
 * count is the window's, so Remaining is exact. When a second host takes from the same
 * window, the window is shared: every host then takes one request at a time, and the
 * first host gives back what it holds (key_budget_settle), so that a refusal still means
 * that every request of the limit was served.
 *
 * The table lives in memory every worker of the host maps (app/api/ops/metrics's file); each slot
 * has a lock that a dead worker cannot keep (its owner's pid is checked). Pure logic over
 * that memory: no database, no clock (the caller gives the window and the time). */
#ifndef MARKET_KEY_BUDGET_H
#define MARKET_KEY_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEY_BUDGET_HASH_LEN 32
#define KEY_BUDGET_ACCOUNT_MAX 64

typedef struct key_budget key_budget;

/* A key's row, as the key check reads it. */
typedef struct {
    int64_t key_id;
    char account_id[KEY_BUDGET_ACCOUNT_MAX]; /* NUL-terminated */
    bool live;                               /* mode: live (else test) */
    bool read_write;                         /* access */
    int64_t expires_ms;                      /* Unix ms after which it is refused; 0: never */
} key_row;

/* Bytes of shared memory the table needs for `slots` keys. */
size_t key_budget_size(unsigned slots);

/* The table in `memory` (key_budget_size(slots) bytes, zeroed when new, shared by the
 * host's workers); the first process to see it zeroed gives it `host_id` (not 0), which
 * names this host in rate_counters. */
key_budget *key_budget_attach(void *memory, unsigned slots, uint64_t host_id);
uint64_t key_budget_host(const key_budget *kb);

/* A generation no row is ever kept under. */
#define KEY_BUDGET_NEVER UINT64_MAX

/* The keys' generation, read before a key's row is fetched from the database and given
 * back to key_budget_store: a row fetched across an invalidation is never kept. */
uint64_t key_budget_generation(const key_budget *kb);
/* Every kept key row is stale (a key was changed); budgets are kept. */
void key_budget_invalidate(key_budget *kb);

typedef enum {
    KB_ADMIT,  /* admitted: the key is kept and usable, a request of its budget was taken */
    KB_REFUSE, /* refused: the window's limit is reached (only the database says so) */
    KB_ASK,    /* the database must answer: unknown or stale key, no budget, shared window */
} kb_verdict;

/* What key_budget_take decided, and what the request's headers say. */
typedef struct {
    key_row row;    /* with KB_ADMIT */
    long remaining; /* with KB_ADMIT: left in the window after it */
    bool row_fresh; /* with KB_ASK: the row is kept and current (count only) */
    long want;      /* with KB_ASK: how many requests to ask the database for */
} kb_answer;

/* The request of the key whose SHA-256 is hash, in `window` (floor(Unix seconds / 60)),
 * at now_ms, under `limit` per window; count false takes nothing (a request refused for
 * the key's requests in flight, which must not count) and only reads. A request without
 * budget always asks the database, which alone refuses: a window it started again (its
 * row deleted, a failover) is then seen at once. */
kb_verdict key_budget_take(key_budget *kb, const uint8_t *hash, int64_t window, long limit,
                           int64_t now_ms, bool count, kb_answer *out);

/* What the database answered to a take (count_asked true) or to a read (false), and
 * what the request gets from it. */
typedef struct {
    kb_verdict verdict; /* KB_ADMIT or KB_REFUSE (of a read: KB_ADMIT, nothing taken) */
    long remaining;     /* X-RateLimit-Remaining of the request */
    long give_back;     /* requests the host holds that must go back to the database now */
    long blocks;        /* the blocks they came from (rate_counters.lent) */
} kb_stored;

/* Keeps what the database answered for the request of the key whose SHA-256 is hash:
 * row (kept when `generation` is still current), the window it counted in and the
 * incarnation of the window's row (another than the one the host took from means the
 * row was started again: the database's count wins; 0: no row), the requests granted
 * (0: over the limit; above 1 the rest is the host's budget), the window's count after
 * it, and whether the window is shared with another host. Over the limit, a request may
 * still be admitted from budget another worker of the host took meanwhile. */
kb_stored key_budget_store(key_budget *kb, const uint8_t *hash, uint64_t generation,
                           const key_row *row, int64_t window, int64_t incarnation, long limit,
                           bool count_asked, long granted, long count, bool shared);

/* Marks the window of the key with id key_id shared and takes out what the host holds
 * of it: unused requests and the number of blocks they came from (both to be returned to
 * rate_counters). False when the host holds nothing of that window. */
bool key_budget_settle(key_budget *kb, int64_t key_id, int64_t window, long *unused, long *blocks);

/* Takes the table's lock and keeps it: what a worker killed inside it leaves behind
 * (the unit tests' stand-in for one). */
void key_budget_lock(key_budget *kb);

/* The block asked for when a window is not shared: enough that a busy key costs one
 * statement per many requests, small next to the limit. */
long key_budget_block(long limit);

#endif
