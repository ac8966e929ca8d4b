/* Runs every unit test suite; exits non-zero when any test fails. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "unit.h"

bool unit_forking(void)
{
    const char *mode = getenv("CK_FORK");
    return mode == NULL || strcmp(mode, "no") != 0;
}

const char *unit_error_field(const char *json, const char *name)
{
    static char value[256];
    value[0] = '\0';
    json_object *root = json_tokener_parse(json);
    json_object *error, *field;
    if (root != NULL && json_object_object_get_ex(root, "error", &error) &&
        json_object_object_get_ex(error, name, &field))
        snprintf(value, sizeof value, "%s", json_object_get_string(field));
    json_object_put(root);
    return value;
}

const char *unit_database(void)
{
    const char *conninfo = getenv("MARKET_TEST_DB");
    return conninfo != NULL && conninfo[0] != '\0' ? conninfo : NULL;
}

/* Makes one suite (arena_suite, ...). */
typedef Suite *(*suite_fn)(void);

int main(void)
{
    if (!crypto_init())
        return EXIT_FAILURE;
    static const suite_fn suites[] = {
        arena_suite,   buf_suite,        config_suite,      crypto_suite,   cursor_suite,
        db_suite,      db_hosts_suite,   db_array_suite,    hash_suite,     ids_suite,
        input_suite,   key_budget_suite, json_body_suite,   json_out_suite, log_suite,
        metrics_suite, money_suite,      netcheck_suite,    prom_suite,     query_suite,
        replica_suite, resolver_suite,   ring_cache_suite,  route_suite,    settings_suite,
        text_suite,    url_suite,        webhook_sign_suite};
    static const suite_fn app_suites[] = {
        auth_suite,  cabundle_suite, duetimes_suite,  fastcgi_conns_suite, idempotency_suite,
        links_suite, mime_suite,     pipeline_suite,  pool_idle_suite,     prune_pass_suite,
        retry_suite, routes_suite,   site_text_suite, target_suite};
    if (unit_database() == NULL)
        printf("MARKET_TEST_DB unset: the PostgreSQL cases (db, db_array) are left out; "
               "make admin-test runs them\n");
    SRunner *runner = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(runner, suites[i]());
    for (size_t i = 0; i < sizeof app_suites / sizeof app_suites[0]; i++)
        srunner_add_suite(runner, app_suites[i]());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
