/* refund: what the payment system does when a sale is reversed. The status change fires
 * the sale.refunded trigger, and every link of the order stops working, in one
 * transaction. */
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "ids.h"

int cmd_refund(int argc, char **argv)
{
    const char *pos[1];
    if (parse_options("refund", argc, argv, NULL, 0, pos, 1) != 1)
        usage_fail("refund: ORDER_ID is required");
    const char *order = pos[0];
    if (!ids_prefixed_valid(order, "ord_"))
        fail("refund: %s is not an order id (ord_...)", order);

    market_config cfg;
    db *d = admin_connect(0, &cfg);
    sql_begin(d, "refund", DB_READ_COMMITTED);
    const char *params[] = {order};
    db_result *res =
        sql_run(d, "refund", "SELECT status FROM orders WHERE id = $1 FOR UPDATE", 1, params);
    if (db_rows(res) == 0)
        fail("refund: no such order %s", order);
    if (strcmp(db_text(res, 0, 0), "paid") != 0)
        fail("refund: order %s is %s, not paid", order, db_text(res, 0, 0));
    db_clear(res);
    sql_do(d, "refund", "UPDATE orders SET status = 'refunded', refunded_at = now() WHERE id = $1",
           1, params);
    res = sql_run(d, "refund",
                  "UPDATE download_tokens SET revoked_at = now() WHERE revoked_at IS NULL"
                  " AND download_id IN (SELECT id FROM downloads WHERE order_id = $1)",
                  1, params);
    long long revoked = db_affected(res);
    sql_commit(d, "refund");
    printf("refunded %s (%lld links revoked)\n", order, revoked);
    db_clear(res);
    db_close(d);
    return 0;
}
