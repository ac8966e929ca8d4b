/* api/idempotency: the replay rules of Idempotency-Key (docs/contract.md section 6): the
 * header's form, the verdict on the key's record (run, replay, 409), which answers are
 * stored, and the fingerprint that tells one request from another; the header's form also
 * through idem_begin itself, which refuses it before any database work. */
#include <string.h>

#include "api/keys/idempotency.h"
#include "unit.h"
#include "unit_request.h"

START_TEST(without_a_header_there_is_no_key)
{
    ck_assert_int_eq(idem_header_verdict(NULL, false), IDEM_NO_KEY);
}
END_TEST

START_TEST(a_key_is_1_to_255_printable_ascii_characters)
{
    char longest[IDEM_KEY_MAX + 2];
    memset(longest, 'k', IDEM_KEY_MAX);
    longest[IDEM_KEY_MAX] = '\0';
    ck_assert_int_eq(idem_header_verdict(longest, false), IDEM_KEY_VALID);
    longest[IDEM_KEY_MAX] = 'k';
    longest[IDEM_KEY_MAX + 1] = '\0';
    ck_assert_int_eq(idem_header_verdict(longest, false), IDEM_KEY_INVALID);

    static const char *const valid[] = {"k", " ", "~", "order 42 / retry ~!"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        ck_assert_msg(idem_header_verdict(valid[i], false) == IDEM_KEY_VALID, "%s", valid[i]);
    static const char *const invalid[] = {"", "tab\there", "\x1f", "del\x7f", "\xc3\xa9"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        ck_assert_msg(idem_header_verdict(invalid[i], false) == IDEM_KEY_INVALID, "[%zu]", i);
}
END_TEST

START_TEST(a_key_sent_twice_is_refused_whatever_it_is)
{
    ck_assert_int_eq(idem_header_verdict("k", true), IDEM_KEY_REPEATED);
    ck_assert_int_eq(idem_header_verdict("", true), IDEM_KEY_REPEATED);
}
END_TEST

static idem_verdict record(bool claimed, bool same_request, int status)
{
    const idem_record rec = {claimed, same_request, status};
    return idem_record_verdict(&rec);
}

START_TEST(a_claimed_key_runs_the_handler)
{
    /* No record under (API key, key), or one older than the window: the claim took it. */
    ck_assert_int_eq(record(true, false, 0), IDEM_RUN);
}
END_TEST

START_TEST(the_same_request_replays_the_stored_answer)
{
    ck_assert_int_eq(record(false, true, 201), IDEM_REPLAY);
    ck_assert_int_eq(record(false, true, 200), IDEM_REPLAY);
    /* An error outcome is replayed too. */
    ck_assert_int_eq(record(false, true, 404), IDEM_REPLAY);
    ck_assert_int_eq(record(false, true, 409), IDEM_REPLAY);
}
END_TEST

START_TEST(another_request_under_the_key_is_a_conflict)
{
    ck_assert_int_eq(record(false, false, 201), IDEM_CONFLICT);
    ck_assert_int_eq(record(false, false, 404), IDEM_CONFLICT);
    /* A record gone when read (0: not found) is not this request's either. */
    ck_assert_int_eq(record(false, false, 0), IDEM_CONFLICT);
}
END_TEST

START_TEST(an_answer_not_stored_is_never_replayed)
{
    ck_assert_int_eq(record(false, true, 0), IDEM_IN_PROGRESS);
}
END_TEST

START_TEST(answers_below_500_are_stored)
{
    static const int stored[] = {200, 201, 204, 400, 404, 409, 422, 499};
    for (size_t i = 0; i < sizeof stored / sizeof stored[0]; i++)
        ck_assert_msg(idem_stores(stored[i]), "%d", stored[i]);
    static const int not_stored[] = {500, 502, 503};
    for (size_t i = 0; i < sizeof not_stored / sizeof not_stored[0]; i++)
        ck_assert_msg(!idem_stores(not_stored[i]), "%d", not_stored[i]);
}
END_TEST

static arena a;

static void setup(void)
{
    arena_init(&a, 4096);
}

static void teardown(void)
{
    arena_free(&a);
}

#define LINK_ROUTE "POST /v1/downloads/:id/link"

/* The fingerprint of a request whose body is json (NULL: none). */
static const char *fingerprint(const char *method, const char *route, const char *param,
                               const char *json)
{
    static char hex[2][IDEM_FINGERPRINT_LEN + 1];
    static int turn;
    turn = !turn;
    json_object *body = json != NULL ? json_tokener_parse(json) : NULL;
    idem_fingerprint(&a, method, route, param, param != NULL ? strlen(param) : 0, body, hex[turn]);
    json_object_put(body);
    return hex[turn];
}

START_TEST(the_fingerprint_is_stable)
{
    /* SHA-256 of "4:POST27:POST /v1/downloads/:id/link4:dl_118:{"expires_in":600}", made
     * outside this code base (Python's hashlib): records stored before a release still
     * match the same request after it. */
    ck_assert_str_eq(fingerprint("POST", LINK_ROUTE, "dl_1", "{\"expires_in\":600}"),
                     "1cf2f0c908c750451ab818d7c95249aec0ba4896f1bac5eab0ebf08d75427256");
}
END_TEST

START_TEST(white_space_in_the_body_is_not_the_requests)
{
    ck_assert_str_eq(fingerprint("POST", LINK_ROUTE, "dl_1", "{\"expires_in\":600}"),
                     fingerprint("POST", LINK_ROUTE, "dl_1", " {\n \"expires_in\" : 600 }\n"));
}
END_TEST

START_TEST(method_route_parameter_and_body_each_tell_requests_apart)
{
    const char *base = fingerprint("POST", LINK_ROUTE, "dl_1", "{\"expires_in\":600}");
    char first[IDEM_FINGERPRINT_LEN + 1];
    snprintf(first, sizeof first, "%s", base);
    ck_assert_str_ne(first, fingerprint("PUT", LINK_ROUTE, "dl_1", "{\"expires_in\":600}"));
    ck_assert_str_ne(first, fingerprint("POST", "POST /v1/webhooks/:id/rotate_secret", "dl_1",
                                        "{\"expires_in\":600}"));
    ck_assert_str_ne(first, fingerprint("POST", LINK_ROUTE, "dl_2", "{\"expires_in\":600}"));
    ck_assert_str_ne(first, fingerprint("POST", LINK_ROUTE, "dl_1", "{\"expires_in\":700}"));
    ck_assert_str_ne(first, fingerprint("POST", LINK_ROUTE, "dl_1", NULL));
    /* No body and an empty object are two requests. */
    ck_assert_str_ne(fingerprint("POST", LINK_ROUTE, "dl_1", NULL),
                     fingerprint("POST", LINK_ROUTE, "dl_1", "{}"));
}
END_TEST

START_TEST(no_two_splits_of_the_same_bytes_share_a_fingerprint)
{
    ck_assert_str_ne(fingerprint("POST", "POST /a", "bc", NULL),
                     fingerprint("POST", "POST /ab", "c", NULL));
    ck_assert_str_ne(fingerprint("POST", "POST /a", NULL, "{}"),
                     fingerprint("POST", "POST /a{}", NULL, NULL));
}
END_TEST

/* idem_begin's own answers, on a request without a database. */
static unit_request t;

static void request_setup(void)
{
    unit_request_open(&t);
    t.r.method = "POST";
}

static void request_teardown(void)
{
    unit_request_close(&t);
}

START_TEST(without_a_key_idem_begin_claims_nothing)
{
    idem_state st = {.active = true};
    ck_assert(idem_begin(&t.r, LINK_ROUTE, &st));
    ck_assert(!st.active);
    ck_assert_int_eq(t.r.status, 0); /* nothing answered: the handler answers */
    ck_assert(idem_guard(&t.r, &st));
}
END_TEST

START_TEST(idem_begin_refuses_the_headers_form_naming_it)
{
    static const struct {
        const char *key;
        bool repeated;
        const char *message;
    } cases[] = {
        {"k", true, "Idempotency-Key must be sent once"},
        {"", false, "Idempotency-Key must be 1 to 255 printable ASCII characters"},
        {"\xc3\xa9", false, "Idempotency-Key must be 1 to 255 printable ASCII characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t.r.idempotency_key = cases[i].key;
        t.r.idempotency_key_repeated = cases[i].repeated;
        idem_state st;
        ck_assert(!idem_begin(&t.r, LINK_ROUTE, &st));
        ck_assert(!st.active);
        ck_assert_int_eq(t.r.status, 400);
        ck_assert_str_eq(unit_error_field(t.body.data, "code"), "idempotency_key_invalid");
        ck_assert_str_eq(unit_error_field(t.body.data, "param"), "Idempotency-Key");
        ck_assert_str_eq(unit_error_field(t.body.data, "message"), cases[i].message);
    }
}
END_TEST

Suite *idempotency_suite(void)
{
    Suite *s = suite_create("idempotency");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, without_a_header_there_is_no_key);
    tcase_add_test(rules, a_key_is_1_to_255_printable_ascii_characters);
    tcase_add_test(rules, a_key_sent_twice_is_refused_whatever_it_is);
    tcase_add_test(rules, a_claimed_key_runs_the_handler);
    tcase_add_test(rules, the_same_request_replays_the_stored_answer);
    tcase_add_test(rules, another_request_under_the_key_is_a_conflict);
    tcase_add_test(rules, an_answer_not_stored_is_never_replayed);
    tcase_add_test(rules, answers_below_500_are_stored);
    suite_add_tcase(s, rules);
    TCase *print = tcase_create("fingerprint");
    tcase_add_checked_fixture(print, setup, teardown);
    tcase_add_test(print, the_fingerprint_is_stable);
    tcase_add_test(print, white_space_in_the_body_is_not_the_requests);
    tcase_add_test(print, method_route_parameter_and_body_each_tell_requests_apart);
    tcase_add_test(print, no_two_splits_of_the_same_bytes_share_a_fingerprint);
    suite_add_tcase(s, print);
    TCase *begin = tcase_create("begin");
    tcase_add_checked_fixture(begin, request_setup, request_teardown);
    tcase_add_test(begin, without_a_key_idem_begin_claims_nothing);
    tcase_add_test(begin, idem_begin_refuses_the_headers_form_naming_it);
    suite_add_tcase(s, begin);
    return s;
}
