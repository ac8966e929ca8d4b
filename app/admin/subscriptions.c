/* webhooks list|disable|enable|delete: what a subscriber does through the API's section 13
 * routes, for an operator (any account). delete is DELETE /v1/webhooks/:id's own
 * webhook_subscription_delete (sql/migrations/015_subscription_delete.sql): pending
 * deliveries whose send has not begun end as endpoint_deleted, unsent. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "ids.h"

/* Deleted subscriptions are not listed: they exist only for their deliveries' history. */
static const char list_sql[] =
    "SELECT id, account_id AS account, mode, status, url, to_json(events) AS events, " SQL_RFC3339(
        "created_at") " AS created_at FROM webhook_subscriptions"
                      " WHERE status <> 'deleted' AND ($1::text IS NULL OR account_id = $1)"
                      "   AND ($2::text IS NULL OR mode = $2)"
                      " ORDER BY account_id, mode, webhook_subscriptions.created_at, id";

static int webhooks_list(int argc, char **argv)
{
    option opts[] = {{"--account", false, NULL}, {"--mode", false, NULL}, {"--json", true, NULL}};
    parse_options("webhooks list", argc, argv, opts, 3, NULL, 0);
    const char *mode = opts[1].value != NULL ? parse_mode("webhooks list", opts[1].value) : NULL;
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    const char *params[] = {opts[0].value, mode};
    db_result *res = sql_run(d, "webhooks list", list_sql, 2, params);
    print_table(res, opts[2].value != NULL);
    db_clear(res);
    db_close(d);
    return 0;
}

/* The one argument of disable, enable and delete: a subscription id. */
static const char *subscription_argument(const char *what, int argc, char **argv)
{
    const char *pos[1];
    if (parse_options(what, argc, argv, NULL, 0, pos, 1) != 1)
        usage_fail("%s: SUBSCRIPTION_ID is required", what);
    if (!ids_prefixed_valid(pos[0], "we_"))
        fail("%s: %s is not a subscription id (we_...)", what, pos[0]);
    return pos[0];
}

static int webhooks_set_status(int argc, char **argv, const char *what, const char *status)
{
    const char *id = subscription_argument(what, argc, argv);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    const char *params[] = {id, status};
    db_result *res = sql_run(d, what,
                             "UPDATE webhook_subscriptions SET status = $2, updated_at = now()"
                             " WHERE id = $1 AND status <> 'deleted' RETURNING id",
                             2, params);
    if (db_rows(res) == 0)
        fail("%s: no such subscription %s", what, id);
    printf("%s %s\n", status, id);
    db_clear(res);
    db_close(d);
    return 0;
}

static int webhooks_delete(int argc, char **argv)
{
    const char *id = subscription_argument("webhooks delete", argc, argv);
    market_config cfg;
    db *d = admin_connect(0, &cfg);
    const char *params[] = {id};
    db_result *res = sql_run(d, "webhooks delete",
                             "SELECT subscription_id, deliveries_ended"
                             " FROM webhook_subscription_delete($1, NULL, NULL)",
                             1, params);
    if (db_rows(res) == 0)
        fail("webhooks delete: no such subscription %s", id);
    printf("deleted %s (%s pending deliveries ended)\n", id, db_text(res, 0, 1));
    db_clear(res);
    db_close(d);
    return 0;
}

int cmd_webhooks(int argc, char **argv)
{
    if (argc < 1)
        usage_fail("webhooks: expected list, disable, enable or delete");
    if (strcmp(argv[0], "list") == 0)
        return webhooks_list(argc - 1, argv + 1);
    if (strcmp(argv[0], "disable") == 0)
        return webhooks_set_status(argc - 1, argv + 1, "webhooks disable", "disabled");
    if (strcmp(argv[0], "enable") == 0)
        return webhooks_set_status(argc - 1, argv + 1, "webhooks enable", "enabled");
    if (strcmp(argv[0], "delete") == 0)
        return webhooks_delete(argc - 1, argv + 1);
    usage_fail("webhooks: unknown subcommand %s (list, disable, enable or delete)", argv[0]);
}
