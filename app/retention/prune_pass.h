/* prune_pass: the steps of one retention pass and its figures, without the database
 * (retention.h runs them against it).
 *
 * A pass works through the steps in order, each in batches of at most PRUNE_BATCH rows:
 * a batch that came back full may have left rows behind, so its step runs again after
 * PRUNE_PAUSE_MS; a batch that came back short ends its step. The pause keeps a large
 * backlog (the first pass on a year-old outbox) from becoming one long burst of writes:
 * every statement is short and commits on its own, and the database gets room between
 * them. */
#ifndef MARKET_RETENTION_PRUNE_PASS_H
#define MARKET_RETENTION_PRUNE_PASS_H

#include <stdbool.h>
#include <stddef.h>

#define PRUNE_BATCH 1000
#define PRUNE_PAUSE_MS 100

/* The steps of a pass, in their order. */
typedef enum {
    PRUNE_STEP_EVENTS,           /* finished events, with their deliveries and attempts */
    PRUNE_STEP_DOWNLOAD_TOKENS,  /* links expired more than the retention ago */
    PRUNE_STEP_API_KEYS,         /* keys expired or revoked more than the retention ago */
    PRUNE_STEP_IDEMPOTENCY_KEYS, /* records older than the Idempotency-Key window */
    PRUNE_STEPS
} prune_step;

/* The tables a pass counts, named as in retention_totals (sql/migrations/008). */
typedef enum {
    PRUNE_EVENTS,
    PRUNE_DELIVERIES,
    PRUNE_ATTEMPTS,
    PRUNE_DOWNLOAD_TOKENS,
    PRUNE_API_KEYS,
    PRUNE_IDEMPOTENCY_KEYS,
    PRUNE_TABLES
} prune_table;

extern const char *const prune_table_names[PRUNE_TABLES];

typedef struct {
    prune_step step;                /* whose batch runs next; PRUNE_STEPS once done */
    long long pruned[PRUNE_TABLES]; /* rows deleted so far, per table */
    int batches;
} prune_pass;

void prune_pass_start(prune_pass *p);

/* Counts a batch of the current step that found `found` rows (at most PRUNE_BATCH) and
 * deleted `deleted` rows of its own table (the caller adds each table's figure to
 * p->pruned). Returns true when the same step runs again: the batch was full and did
 * something (a full batch that deleted nothing would only find the same rows again);
 * otherwise moves on to the next step. */
bool prune_pass_next(prune_pass *p, int found, long long deleted);

bool prune_pass_done(const prune_pass *p);

/* How often passes start: a sixtieth of the retention, from 1 s to 60 s, so that nothing
 * outlives its period by more than about a sixtieth of it (and a minute at most). */
long long prune_interval_ms(long retention_seconds);

/* The two array literals of the totals statement: "{events,webhook_deliveries,...}" and
 * "{12,24,...}". False when a buffer is too small. */
bool prune_pass_arrays(const prune_pass *p, char *names, size_t names_size, char *counts,
                       size_t counts_size);

/* The pass's log line: "pruned events=12 webhook_deliveries=24 ... batches=6
 * duration_ms=41 retention=30d". */
void prune_pass_summary(const prune_pass *p, long retention_seconds, long long elapsed_ms,
                        char *out, size_t size);

/* A duration in the largest of d, h, m, s that divides it: "30d", "36h", "90s". */
void prune_format_duration(long seconds, char *out, size_t size);

#endif
