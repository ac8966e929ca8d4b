/* The unit test suites, one per module of lib/ and app/; main.c runs them all. */
#ifndef MARKET_UNIT_H
#define MARKET_UNIT_H

#include <check.h>
#include <stdbool.h>

/* A field of the error envelope (docs/contract.md section 4) json holds, "" when absent: for
 * the tests that answer a request in memory. The text lives until the next call. */
const char *unit_error_field(const char *json, const char *name);

Suite *arena_suite(void);
Suite *buf_suite(void);
Suite *config_suite(void);
Suite *crypto_suite(void);
Suite *cursor_suite(void);
Suite *db_suite(void);
Suite *db_hosts_suite(void);
Suite *db_array_suite(void);
Suite *hash_suite(void);
Suite *ids_suite(void);
Suite *input_suite(void);
Suite *key_budget_suite(void);
Suite *json_body_suite(void);
Suite *json_out_suite(void);
Suite *log_suite(void);
Suite *metrics_suite(void);
Suite *money_suite(void);
Suite *netcheck_suite(void);
Suite *prom_suite(void);
Suite *query_suite(void);
Suite *replica_suite(void);
Suite *resolver_suite(void);
Suite *ring_cache_suite(void);
Suite *settings_suite(void);
Suite *route_suite(void);
Suite *text_suite(void);
Suite *url_suite(void);
Suite *webhook_sign_suite(void);

/* The pure parts of the programs (app/), linked in without their main.c. */
Suite *auth_suite(void);
Suite *cabundle_suite(void);
Suite *duetimes_suite(void);
Suite *fastcgi_conns_suite(void);
Suite *idempotency_suite(void);
Suite *links_suite(void);
Suite *mime_suite(void);
Suite *pipeline_suite(void);
Suite *pool_idle_suite(void);
Suite *prune_pass_suite(void);
Suite *routes_suite(void);
Suite *retry_suite(void);
Suite *site_text_suite(void);
Suite *target_suite(void);

/* The conninfo of a scratch database for the cases that need PostgreSQL (MARKET_TEST_DB),
 * or NULL: those cases are then not added. make admin-test runs them against its own
 * cluster; make unit says that it leaves them out. */
const char *unit_database(void);

/* True when Check runs each test in a child process (CK_FORK is not "no"). Tests that
 * expect abort() are only added then: without a child they would end the whole run. */
bool unit_forking(void);

#endif
