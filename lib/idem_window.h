/* idem_window: how long an Idempotency-Key is remembered (docs/contract.md section 6).
 *
 * market-api replays a key's first response within the window and treats an older record
 * as absent; market-webhookd's retention pass deletes the records older than it. One
 * definition, so that the two never disagree. */
#ifndef MARKET_IDEM_WINDOW_H
#define MARKET_IDEM_WINDOW_H

#define IDEM_WINDOW_SQL "interval '24 hours'"

#endif
