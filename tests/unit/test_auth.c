/* api/auth: the key check's verdicts (docs/contract.md sections 2 and 3): the header's
 * form, the key's row, the rate limit and the requests in flight, each with the answer
 * the contract gives it; the header's form and the scopes also through auth.c itself,
 * which answers them without a database. The rate budget is test_key_budget.c's. */
#include <string.h>

#include "api/keys/auth.h"
#include "api/keys/auth_rules.h"
#include "unit.h"
#include "unit_request.h"

#define RANDOM_32 "abcdefghijklmnopqrstuvwxyzABCDEF"
#define TEST_KEY "sk_test_" RANDOM_32
#define LIVE_KEY "sk_live_" RANDOM_32

static auth_verdict header(const char *value)
{
    const char *key;
    return auth_header_verdict(value, &key);
}

START_TEST(a_missing_or_empty_header_is_missing_key)
{
    ck_assert_int_eq(header(NULL), AUTH_MISSING_KEY);
    ck_assert_int_eq(header(""), AUTH_MISSING_KEY);
}
END_TEST

START_TEST(another_scheme_is_not_bearer)
{
    static const char *const values[] = {
        "Basic c2tfdGVzdF86", "Token " TEST_KEY, TEST_KEY, "Bearer",
        "Bearer\t" TEST_KEY,  "Bearer:" TEST_KEY};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        ck_assert_msg(header(values[i]) == AUTH_NOT_BEARER, "%s", values[i]);
}
END_TEST

START_TEST(a_key_of_another_shape_is_malformed)
{
    char too_long[8 + 201 + 8];
    snprintf(too_long, sizeof too_long, "Bearer sk_test_%0201d", 0);
    static const char *const values[] = {
        "Bearer ",
        "Bearer sk_test_short",
        "Bearer sk_prod_" RANDOM_32,
        "Bearer sk_test_" RANDOM_32 "!",
        "Bearer sk_test_abcdefghijklmnopqrstuvwxyzABCDE", /* 31 */
        "Bearer SK_TEST_" RANDOM_32,
        "Bearer " TEST_KEY " " TEST_KEY,
        "Bearer sk_test_abcdefghijklmnopqrstuvwxyzABCD\xc3\xa9",
        "Bearer sk_test_" RANDOM_32 "\xff\xfe",
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        ck_assert_msg(header(values[i]) == AUTH_MALFORMED_KEY, "%s", values[i]);
    ck_assert_int_eq(header(too_long), AUTH_MALFORMED_KEY);
}
END_TEST

START_TEST(a_well_formed_key_is_accepted_and_found_in_the_header)
{
    const char *key;
    ck_assert_int_eq(auth_header_verdict("Bearer " TEST_KEY, &key), AUTH_ACCEPTED);
    ck_assert_str_eq(key, TEST_KEY);
    /* The scheme's name is case-insensitive (RFC 7235); spaces before the key are not its. */
    ck_assert_int_eq(auth_header_verdict("bEARER    " LIVE_KEY, &key), AUTH_ACCEPTED);
    ck_assert_str_eq(key, LIVE_KEY);
    char longest[8 + 200 + 8];
    snprintf(longest, sizeof longest, "Bearer sk_live_%0200d", 0);
    ck_assert_int_eq(auth_header_verdict(longest, &key), AUTH_ACCEPTED);
}
END_TEST

START_TEST(the_prefix_names_the_mode)
{
    ck_assert_str_eq(auth_prefix_mode(LIVE_KEY), "live");
    ck_assert_str_eq(auth_prefix_mode(TEST_KEY), "test");
}
END_TEST

static auth_verdict row(bool found, bool usable, bool revoked, const char *mode,
                        const char *prefix_mode)
{
    const auth_key_row seen = {found, usable, revoked, mode};
    return auth_row_verdict(&seen, prefix_mode);
}

START_TEST(verdicts_on_the_keys_row)
{
    ck_assert_int_eq(row(false, false, false, "", "test"), AUTH_UNKNOWN_KEY);
    ck_assert_int_eq(row(true, true, false, "test", "test"), AUTH_ACCEPTED);
    ck_assert_int_eq(row(true, true, false, "live", "live"), AUTH_ACCEPTED);
    ck_assert_int_eq(row(true, false, true, "test", "test"), AUTH_REVOKED);
    /* Neither usable nor revoked: past its expires_at, the grace of its rotation. */
    ck_assert_int_eq(row(true, false, false, "test", "test"), AUTH_EXPIRED);
    ck_assert_int_eq(row(true, true, false, "live", "test"), AUTH_MODE_MISMATCH);
    ck_assert_int_eq(row(true, true, false, "test", "live"), AUTH_MODE_MISMATCH);
}
END_TEST

START_TEST(a_revoked_key_is_revoked_whatever_else)
{
    /* Revoked after its rotation: the revocation is what the caller is told. */
    ck_assert_int_eq(row(true, false, true, "test", "test"), AUTH_REVOKED);
    ck_assert_int_eq(row(true, false, true, "live", "test"), AUTH_REVOKED);
    ck_assert_int_eq(row(true, false, false, "live", "test"), AUTH_EXPIRED);
}
END_TEST

START_TEST(in_flight_comes_before_the_minutes_limit)
{
    ck_assert_int_eq(auth_rate_verdict(false, true), AUTH_ACCEPTED);
    ck_assert_int_eq(auth_rate_verdict(false, false), AUTH_RATE_LIMITED);
    ck_assert_int_eq(auth_rate_verdict(true, true), AUTH_TOO_MANY_IN_FLIGHT);
    ck_assert_int_eq(auth_rate_verdict(true, false), AUTH_TOO_MANY_IN_FLIGHT);
}
END_TEST

/* Each verdict's answer, as docs/contract.md section 4's table has it. */
START_TEST(each_refusal_is_answered_as_the_contract_says)
{
    static const struct {
        auth_verdict verdict;
        int status;
        const char *type, *code;
        bool presented;
    } cases[] = {
        {AUTH_MISSING_KEY, 401, "authentication_error", "missing_api_key", false},
        {AUTH_NOT_BEARER, 401, "authentication_error", "invalid_api_key", true},
        {AUTH_MALFORMED_KEY, 401, "authentication_error", "invalid_api_key", true},
        {AUTH_UNKNOWN_KEY, 401, "authentication_error", "invalid_api_key", true},
        {AUTH_REVOKED, 401, "authentication_error", "invalid_api_key", true},
        {AUTH_EXPIRED, 401, "authentication_error", "api_key_expired", true},
        {AUTH_MODE_MISMATCH, 401, "authentication_error", "invalid_api_key", true},
        {AUTH_TOO_MANY_IN_FLIGHT, 429, "rate_limit_error", "too_many_in_flight", true},
        {AUTH_RATE_LIMITED, 429, "rate_limit_error", "rate_limited", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const auth_refusal *refusal = auth_refusal_of(cases[i].verdict);
        ck_assert_ptr_nonnull(refusal);
        ck_assert_int_eq(refusal->status, cases[i].status);
        ck_assert_str_eq(refusal->type, cases[i].type);
        ck_assert_str_eq(refusal->code, cases[i].code);
        ck_assert_int_eq(refusal->presented, cases[i].presented);
        if (refusal->status == 401)
            ck_assert_ptr_nonnull(refusal->message);
    }
    ck_assert_ptr_null(auth_refusal_of(AUTH_ACCEPTED));
    ck_assert(strstr(auth_refusal_of(AUTH_REVOKED)->message, "revoked") != NULL);
    /* A key of the other mode is told nothing more than an unknown key. */
    ck_assert_str_eq(auth_refusal_of(AUTH_MODE_MISMATCH)->message,
                     auth_refusal_of(AUTH_UNKNOWN_KEY)->message);
}
END_TEST

/* auth.c's own answers, on a request without a database. */
static unit_request t;

static void setup(void)
{
    unit_request_open(&t);
}

static void teardown(void)
{
    unit_request_close(&t);
}

START_TEST(auth_begin_refuses_the_headers_form_before_any_database_work)
{
    static const struct {
        const char *authorization, *code, *www_authenticate;
    } cases[] = {
        {NULL, "missing_api_key", "WWW-Authenticate: Bearer realm=\"market\"\r\n"},
        {"Token " TEST_KEY, "invalid_api_key",
         "WWW-Authenticate: Bearer realm=\"market\", error=\"invalid_token\"\r\n"},
        {"Bearer sk_test_short", "invalid_api_key",
         "WWW-Authenticate: Bearer realm=\"market\", error=\"invalid_token\"\r\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf_clear(&t.headers);
        t.r.authorization = cases[i].authorization;
        auth_query q;
        ck_assert(!auth_begin(&t.r, &q));
        ck_assert_int_eq(t.r.status, 401);
        ck_assert_str_eq(unit_error_field(t.body.data, "code"), cases[i].code);
        ck_assert_str_eq(t.headers.data, cases[i].www_authenticate); /* no rate headers yet */
        ck_assert(!t.r.rate_known);
    }
}
END_TEST

START_TEST(a_read_only_key_has_the_two_read_scopes)
{
    t.r.caller.read_write = false;
    ck_assert(auth_has_scope(&t.r, "products:read"));
    ck_assert(auth_has_scope(&t.r, "orders:read"));
    static const char *const refused[] = {"downloads:write", "webhooks:read", "webhooks:write"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        ck_assert_msg(!auth_has_scope(&t.r, refused[i]), "%s", refused[i]);
        ck_assert(!auth_require_scope(&t.r, refused[i]));
        ck_assert_int_eq(t.r.status, 403);
        ck_assert_str_eq(unit_error_field(t.body.data, "code"), "insufficient_scope");
        ck_assert(strstr(t.body.data, refused[i]) != NULL); /* the 403 names the scope */
    }
    t.r.caller.read_write = true;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        ck_assert(auth_require_scope(&t.r, refused[i]));
}
END_TEST

Suite *auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, a_missing_or_empty_header_is_missing_key);
    tcase_add_test(rules, another_scheme_is_not_bearer);
    tcase_add_test(rules, a_key_of_another_shape_is_malformed);
    tcase_add_test(rules, a_well_formed_key_is_accepted_and_found_in_the_header);
    tcase_add_test(rules, the_prefix_names_the_mode);
    tcase_add_test(rules, verdicts_on_the_keys_row);
    tcase_add_test(rules, a_revoked_key_is_revoked_whatever_else);
    tcase_add_test(rules, in_flight_comes_before_the_minutes_limit);
    tcase_add_test(rules, each_refusal_is_answered_as_the_contract_says);
    suite_add_tcase(s, rules);
    TCase *answers = tcase_create("answers");
    tcase_add_checked_fixture(answers, setup, teardown);
    tcase_add_test(answers, auth_begin_refuses_the_headers_form_before_any_database_work);
    tcase_add_test(answers, a_read_only_key_has_the_two_read_scopes);
    suite_add_tcase(s, answers);
    return s;
}
