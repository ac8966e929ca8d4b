/* retention: the pruning pass, which deletes what only grows once its period is over
 * (docs/contract.md section 12; docs/operations.md, "Retention"), for the whole site and
 * not only for webhooks:
 *
 *   events          finished (none of their deliveries pending) and neither created nor
 *                   attempted within MARKET_RETENTION, with their deliveries and attempts
 *   download_tokens expired more than MARKET_RETENTION ago
 *   api_keys        expired (rotated, past their grace) or revoked more than
 *                   MARKET_RETENTION ago, and no longer named by a key still in use
 *   idempotency_keys  older than the Idempotency-Key window (24 hours)
 *
 * Orders, their items and downloads, payouts, reviews, the catalogue, accounts and
 * subscriptions are business records and are never pruned. market-api deletes the rate
 * windows of past minutes itself.
 *
 * A pass starts every prune_interval_ms (a sixtieth of the retention, 1 to 60 s) and runs
 * the steps of prune_pass.h, one statement per batch of at most 1,000 rows, each its own
 * short transaction, with a pause after a full batch. Several drainers may run on several
 * hosts: a pass first takes a session advisory lock with pg_try_advisory_lock, and a
 * drainer that does not get it skips that pass, so one prunes at a time; and every batch
 * locks its rows with SKIP LOCKED, so that even two at once would only share the work.
 *
 * Its room is app/retention, apart from the drainer's files, because what it prunes is
 * every feature's; it runs on market-webhookd's loop because that is the one long-lived
 * process of a site (market-api's pools stop when idle, MARKET_IDLE_EXIT), and a site
 * whose drainer runs is a site whose rows get pruned. It runs inside the drainer's loop
 * without waiting for a batch: it has a connection of
 * its own (application_name market-webhookd-retention), opened without blocking for each
 * pass and closed after it when the next is more than 10 s away (the default: a minute),
 * so that between passes the drainer holds its LISTEN connection alone; and it
 * sends one statement at a time, whose answer the loop collects when the connection's
 * socket says it has arrived. Only a new session's settings and the first use of each
 * statement on it (lib/db prepares it) are a round trip the loop waits for, once per
 * connection. Each pass logs one line with its figures and adds them to
 * retention_totals, which /metrics reads. */
#ifndef MARKET_RETENTION_H
#define MARKET_RETENTION_H

typedef struct retention retention;

/* retention_seconds: MARKET_RETENTION. Connects at the first pass, which is due at once. */
retention *retention_open(const char *conninfo, long retention_seconds);

/* Cancels a statement in flight (its transaction rolls back) and closes the connection,
 * which releases the lock. */
void retention_close(retention *rt);

/* Does what is due now without waiting: starts a pass, collects an answer that arrived,
 * sends the next batch. Call it on every turn of the loop. */
void retention_step(retention *rt);

/* The socket to wait on for readability while a statement is in flight, else -1. */
int retention_socket(const retention *rt);

/* Milliseconds until retention_step has something to do when no answer is awaited (the
 * next pass, the end of a pause), 0 when it is due, -1 while an answer is awaited (the
 * socket then wakes the loop). */
long long retention_wait_ms(const retention *rt);

#endif
