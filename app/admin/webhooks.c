/* payout, deliveries, redeliver: the payment side of webhooks and a window on the
 * outbox. Events themselves are written by the triggers of the migrations; this file
 * only causes them (payout) or re-queues their deliveries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "ids.h"
#include "money.h"
#include "text.h"

static int currency_exponent(db *d, const char *currency)
{
    const char *params[] = {currency};
    db_result *res =
        sql_run(d, "payout", "SELECT exponent FROM currencies WHERE code = $1", 1, params);
    if (db_rows(res) == 0)
        fail("payout: unknown currency %s", currency);
    int exponent = (int)db_int(res, 0, 0);
    db_clear(res);
    return exponent;
}

int cmd_payout(int argc, char **argv)
{
    option opts[] = {{"--seller", false, NULL},
                     {"--amount", false, NULL},
                     {"--currency", false, NULL},
                     {"--mode", false, NULL}};
    parse_options("payout", argc, argv, opts, 4, NULL, 0);
    const char *seller = option_required("payout", &opts[0]);
    const char *amount = option_required("payout", &opts[1]);
    const char *currency = option_required("payout", &opts[2]);
    const char *mode = parse_mode("payout", option_required("payout", &opts[3]));
    if (strlen(currency) != 3)
        usage_fail("payout: --currency must be an ISO 4217 code such as USD");

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    int exponent = currency_exponent(d, currency);
    int64_t minor;
    if (!money_parse(amount, exponent, &minor) || minor <= 0)
        fail("payout: --amount must be a positive number with at most %d decimals", exponent);
    const char *find[] = {seller};
    db_result *res = sql_run(d, "payout", "SELECT 1 FROM sellers WHERE id = $1", 1, find);
    if (db_rows(res) == 0)
        fail("payout: no such seller %s", seller);
    db_clear(res);

    char id[40];
    ids_random(id, sizeof id, "po_");
    db_arg minor_arg;
    const char *params[] = {id, mode, seller, db_arg_int(&minor_arg, minor), currency};
    sql_do(d, "payout",
           "INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status, sent_at)"
           " VALUES ($1, $2, $3, $4, $5, 'sent', now())",
           5, params);
    puts(id);
    db_close(d);
    return 0;
}

/* The first six columns are the contract's (section 9), in its order. Newest first, so
 * that --limit shows what an operator looks for: what just happened. One more row than
 * the limit is read, to say when there are more; without --limit, every row. */
static const char deliveries_sql[] = "SELECT e.id AS event, e.type, d.subscription_id AS "
                                     "subscription, d.status, d.attempts,"
                                     " d.last_status, d.last_error, " SQL_RFC3339(
                                         "CASE WHEN d.status = 'pending' THEN d.next_attempt_at "
                                         "END") " AS next_attempt_at,"
                                                " e.account_id AS account, e.mode, " SQL_RFC3339(
                                                    "d.created_at") " AS created_at"
                                                                    " FROM webhook_deliveries d "
                                                                    "JOIN events e ON e.id = "
                                                                    "d.event_id"
                                                                    " WHERE ($1::text IS NULL OR "
                                                                    "d.status = $1)"
                                                                    "   AND ($2::text IS NULL OR "
                                                                    "e.account_id = $2)"
                                                                    "   AND ($3::timestamptz IS "
                                                                    "NULL OR d.created_at >= "
                                                                    "$3::timestamptz)"
                                                                    " ORDER BY d.created_at DESC, "
                                                                    "d.id DESC LIMIT $4::bigint + "
                                                                    "1"; /* NULL: no limit */

static const char *const delivery_statuses[] = {"pending", "delivered", "failed",
                                                "endpoint_deleted"};

static const char *parse_status(const char *text)
{
    for (size_t i = 0; i < sizeof delivery_statuses / sizeof delivery_statuses[0]; i++)
        if (strcmp(text, delivery_statuses[i]) == 0)
            return delivery_statuses[i];
    usage_fail("deliveries: --status must be pending, delivered, failed or endpoint_deleted");
}

int cmd_deliveries(int argc, char **argv)
{
    option opts[] = {{"--failed", true, NULL},   {"--status", false, NULL},
                     {"--account", false, NULL}, {"--since", false, NULL},
                     {"--limit", false, NULL},   {"--json", true, NULL}};
    parse_options("deliveries", argc, argv, opts, 6, NULL, 0);
    const char *status = opts[1].value != NULL ? parse_status(opts[1].value) : NULL;
    if (opts[0].value != NULL) {
        if (status != NULL)
            usage_fail("deliveries: --failed is --status failed; give one of them");
        status = "failed";
    }
    const char *since = opts[3].value;
    if (since != NULL && !rfc3339_valid(since, 6, false))
        usage_fail("deliveries: --since must be an RFC 3339 date-time such as "
                   "2026-11-26T10:00:00Z");
    long limit = opts[4].value != NULL
                     ? parse_count("deliveries", "--limit", opts[4].value, 1, 1000000)
                     : -1;
    db_arg limit_arg;

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    const char *params[] = {status, opts[2].value, since,
                            limit > 0 ? db_arg_int(&limit_arg, limit) : NULL};
    db_result *res = sql_run(d, "deliveries", deliveries_sql, 4, params);
    bool more = limit > 0 && db_rows(res) > limit;
    if (more)
        fprintf(stderr,
                "market-admin: deliveries: the newest %ld shown; there are more "
                "(--limit, --since, --status, --account)\n",
                limit);
    print_table_rows(res, opts[5].value != NULL, more ? (int)limit : db_rows(res));
    db_clear(res);
    db_close(d);
    return 0;
}

/* Attempts restart at 0 so the full retry schedule applies again; the rows of
 * webhook_attempts stay as the history of what happened before. The event's row is
 * locked first (FOR SHARE): market-webhookd's retention pass locks the events it is about
 * to delete and checks their deliveries again after (retention_prune_events, 008), so
 * either it deletes the event and this finds none, or it finds a delivery pending again
 * and keeps the event. */
int cmd_redeliver(int argc, char **argv)
{
    const char *pos[1];
    if (parse_options("redeliver", argc, argv, NULL, 0, pos, 1) != 1)
        usage_fail("redeliver: EVENT_ID is required");
    const char *event = pos[0];
    if (!ids_prefixed_valid(event, "evt_"))
        fail("redeliver: %s is not an event id (evt_...)", event);

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    sql_begin(d, "redeliver", DB_READ_COMMITTED);
    const char *params[] = {event};
    db_result *res =
        sql_run(d, "redeliver", "SELECT 1 FROM events WHERE id = $1 FOR SHARE", 1, params);
    if (db_rows(res) == 0)
        fail("redeliver: no such event %s", event);
    db_clear(res);
    res = sql_run(d, "redeliver",
                  "UPDATE webhook_deliveries SET status = 'pending', attempts = 0,"
                  " next_attempt_at = now(), lease_until = NULL, leased_by = NULL,"
                  " delivered_at = NULL WHERE event_id = $1 AND status <> 'endpoint_deleted'",
                  1, params);
    /* Delivered at commit: drainers listening wake up and find the rows due. */
    sql_do(d, "redeliver", "NOTIFY market_webhooks", 0, NULL);
    sql_commit(d, "redeliver");
    printf("redelivering %s (%lld deliveries)\n", event, db_affected(res));
    db_clear(res);
    db_close(d);
    return 0;
}
