/* payout, deliveries, redeliver: the payment side of webhooks and a window on the
 * outbox. Events themselves are written by the triggers of the migrations; this file
 * only causes them (payout) or re-queues their deliveries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "ids.h"
#include "money.h"

static int currency_exponent(db *c, const char *currency)
{
    const char *params[] = {currency};
    PGresult *res =
        sql_run(c, "payout", "SELECT exponent FROM currencies WHERE code = $1", 1, params);
    if (PQntuples(res) == 0)
        fail("payout: unknown currency %s", currency);
    int exponent = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
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
    db *c = admin_connect(0, &cfg);
    int exponent = currency_exponent(c, currency);
    int64_t minor;
    if (!money_parse(amount, exponent, &minor) || minor <= 0)
        fail("payout: --amount must be a positive number with at most %d decimals", exponent);
    const char *find[] = {seller};
    PGresult *res = sql_run(c, "payout", "SELECT 1 FROM sellers WHERE id = $1", 1, find);
    if (PQntuples(res) == 0)
        fail("payout: no such seller %s", seller);
    PQclear(res);

    char id[40], minor_text[24];
    ids_random(id, sizeof id, "po_");
    snprintf(minor_text, sizeof minor_text, "%lld", (long long)minor);
    const char *params[] = {id, mode, seller, minor_text, currency};
    sql_do(c, "payout",
           "INSERT INTO payouts (id, mode, seller_id, amount_minor, currency, status, sent_at)"
           " VALUES ($1, $2, $3, $4, $5, 'sent', now())",
           5, params);
    puts(id);
    db_close(c);
    return 0;
}

int cmd_deliveries(int argc, char **argv)
{
    option opts[] = {{"--failed", true, NULL}};
    parse_options("deliveries", argc, argv, opts, 1, NULL, 0);
    const char *only_failed = opts[0].value != NULL ? "true" : "false";

    market_config cfg;
    db *c = admin_connect(0, &cfg);
    const char *params[] = {only_failed};
    PGresult *res = sql_run(c, "deliveries",
                            "SELECT e.id, e.type, d.subscription_id, d.status, d.attempts,"
                            " coalesce(d.last_status::text, '-')"
                            " FROM webhook_deliveries d JOIN events e ON e.id = d.event_id"
                            " WHERE NOT $1::boolean OR d.status = 'failed'"
                            " ORDER BY d.created_at, d.id",
                            1, params);
    print_rows(res);
    PQclear(res);
    db_close(c);
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
    db *c = admin_connect(0, &cfg);
    sql_begin(c, "redeliver", DB_READ_COMMITTED);
    const char *params[] = {event};
    PGresult *res =
        sql_run(c, "redeliver", "SELECT 1 FROM events WHERE id = $1 FOR SHARE", 1, params);
    if (PQntuples(res) == 0)
        fail("redeliver: no such event %s", event);
    PQclear(res);
    res = sql_run(c, "redeliver",
                  "UPDATE webhook_deliveries SET status = 'pending', attempts = 0,"
                  " next_attempt_at = now(), lease_until = NULL, leased_by = NULL,"
                  " delivered_at = NULL WHERE event_id = $1 AND status <> 'endpoint_deleted'",
                  1, params);
    /* Delivered at commit: drainers listening wake up and find the rows due. */
    sql_do(c, "redeliver", "NOTIFY market_webhooks", 0, NULL);
    sql_commit(c, "redeliver");
    printf("redelivering %s (%s deliveries)\n", event, PQcmdTuples(res));
    PQclear(res);
    db_close(c);
    return 0;
}
