/* api/pipeline: the contract's order of checks (section 2), run with steps that record
 * what ran and answer as each case needs; the scope step is the real one (auth.c), so a
 * route whose scope the key lacks is refused whatever its kind. */
#include <stdio.h>
#include <string.h>

#include "api/keys/auth.h"
#include "api/http/pipeline.h"
#include "api/http/routes.h"
#include "unit.h"

/* What the fake steps do in one case, and what they saw. */
static struct {
    route_fault fault;   /* what find says */
    bool key_malformed;  /* key_begin answers 401 */
    bool key_unknown;    /* key_finish answers 401 */
    bool over_in_flight; /* key_begin marks the key over its share; key_finish: 429 */
    bool read_write;     /* the key's scopes */
    bool input_refused;  /* read_input (and the catalogue's plan) answer 400 */
    char ran[256];       /* the steps, in order, space separated */
    bool page_with_key;  /* key_finish was given the catalogue's page */
} fake;

static void ran(const char *step)
{
    size_t used = strlen(fake.ran);
    snprintf(fake.ran + used, sizeof fake.ran - used, "%s%s", used > 0 ? " " : "", step);
}

static void handle(request *r)
{
    ran("handle");
    respond_json(r, 200);
}

static bool plan(request *r, catalogue_read *read)
{
    (void)r;
    (void)read;
    return true;
}

static void render(request *r, const catalogue_read *read, db_result *res)
{
    (void)r;
    (void)read;
    (void)res;
}

static const catalogue_handler catalogue_kind = {plan, render};

/* A plain route, a catalogue route, and a route that takes no key (the download location). */
static api_route plain_route = {.name = "plain", .scope = "webhooks:write", .handle = handle};
static api_route catalogue_route = {
    .name = "catalogue", .scope = "webhooks:write", .catalogue = &catalogue_kind};
static api_route keyless_route = {.name = "keyless", .handle = handle};
static api_route *route_of_case;

static route_fault find(request *r)
{
    ran("find");
    r->route = fake.fault == ROUTE_NOT_FOUND ? NULL : route_of_case;
    if (fake.fault == ROUTE_METHOD_NOT_ALLOWED)
        strcpy(r->match.allow, "GET, HEAD");
    return fake.fault;
}

static bool key_begin(request *r, auth_query *q)
{
    (void)q;
    ran("key_begin");
    if (fake.key_malformed)
        return respond_error(r, 401, "authentication_error", "invalid_api_key", NULL, "bad");
    r->over_in_flight = fake.over_in_flight;
    return true;
}

static void plan_page(request *r, serve_page *page)
{
    ran("plan_page");
    page->planned = !fake.input_refused;
    if (fake.input_refused)
        respond_invalid(r, "parameter_invalid", "limit", "limit is wrong");
}

/* cppcheck-suppress constParameter ; its type is pipeline_steps' */
static bool key_finish(request *r, auth_query *q, serve_page *page)
{
    (void)q;
    ran("key_finish");
    fake.page_with_key = page != NULL;
    if (fake.key_unknown)
        return respond_error(r, 401, "authentication_error", "invalid_api_key", NULL, "unknown");
    if (r->over_in_flight)
        return respond_error(r, 429, "rate_limit_error", "too_many_in_flight", NULL, "wait");
    r->caller.read_write = fake.read_write;
    return true;
}

static bool require_scope(request *r, const char *scope)
{
    ran("scope");
    return auth_require_scope(r, scope);
}

static bool read_input(request *r)
{
    ran("input");
    if (fake.input_refused)
        return respond_invalid(r, "parameter_invalid", "limit", "limit is wrong");
    return true;
}

static void answer_page(request *r, serve_page *page)
{
    (void)page;
    ran("answer_page");
    respond_json(r, 200);
}

static const pipeline_steps steps = {find,          key_begin,  plan_page,  key_finish,
                                     require_scope, read_input, answer_page};

static arena a;
static buf body, headers;

/* Runs one request of route (found with fault) through the pipeline; its status. */
static int run(api_route *route, route_fault fault)
{
    fake.fault = fault;
    fake.ran[0] = '\0';
    route_of_case = route;
    request r;
    memset(&r, 0, sizeof r);
    arena_init(&a, 4096);
    buf_init(&body, 1024);
    buf_init(&headers, 256);
    r.arena = &a;
    r.body = &body;
    r.headers = &headers;
    r.method = "GET";
    r.path = "/v1/x";
    r.path_len = strlen(r.path);
    r.request_id = "req_test";
    pipeline_run(&r, &steps);
    int status = r.status;
    if (status == 405)
        ck_assert_ptr_nonnull(strstr(headers.data, "Allow: GET, HEAD"));
    if (status == 403)
        ck_assert_ptr_nonnull(strstr(body.data, "insufficient_scope"));
    buf_free(&body);
    buf_free(&headers);
    arena_free(&a);
    return status;
}

static void reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake.read_write = true;
}

START_TEST(a_plain_route_runs_every_check_in_order)
{
    reset();
    ck_assert_int_eq(run(&plain_route, ROUTE_FOUND), 200);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish scope input handle");
    ck_assert(!fake.page_with_key);
}
END_TEST

START_TEST(a_catalogue_route_plans_its_page_inside_the_key_check)
{
    reset();
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 200);
    ck_assert_str_eq(fake.ran, "find key_begin plan_page key_finish scope answer_page");
    ck_assert(fake.page_with_key);
}
END_TEST

START_TEST(no_key_is_refused_before_the_route_is_said_missing)
{
    reset();
    fake.key_malformed = true;
    ck_assert_int_eq(run(&plain_route, ROUTE_NOT_FOUND), 401);
    ck_assert_str_eq(fake.ran, "find key_begin");
    ck_assert_int_eq(run(&plain_route, ROUTE_METHOD_NOT_ALLOWED), 401);
    reset();
    fake.key_unknown = true;
    ck_assert_int_eq(run(&plain_route, ROUTE_NOT_FOUND), 401);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish");
}
END_TEST

START_TEST(a_valid_key_learns_the_route_is_missing_or_the_method_wrong)
{
    reset();
    ck_assert_int_eq(run(&plain_route, ROUTE_NOT_FOUND), 404);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish");
    ck_assert_int_eq(run(&plain_route, ROUTE_METHOD_NOT_ALLOWED), 405);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish");
    /* A catalogue path with the wrong method is no catalogue request: no page planned. */
    ck_assert_int_eq(run(&catalogue_route, ROUTE_METHOD_NOT_ALLOWED), 405);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish");
    ck_assert(!fake.page_with_key);
}
END_TEST

START_TEST(a_scope_the_key_lacks_is_refused_for_each_kind)
{
    reset();
    fake.read_write = false; /* products:read and orders:read only */
    ck_assert_int_eq(run(&plain_route, ROUTE_FOUND), 403);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish scope");
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 403);
    ck_assert_str_eq(fake.ran, "find key_begin plan_page key_finish scope");
}
END_TEST

START_TEST(a_read_scope_passes_for_each_kind)
{
    reset();
    fake.read_write = false;
    plain_route.scope = "orders:read";
    catalogue_route.scope = "products:read";
    ck_assert_int_eq(run(&plain_route, ROUTE_FOUND), 200);
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 200);
    plain_route.scope = "webhooks:write";
    catalogue_route.scope = "webhooks:write";
}
END_TEST

START_TEST(the_scope_wins_over_a_refused_input)
{
    reset();
    fake.read_write = false;
    fake.input_refused = true;
    ck_assert_int_eq(run(&plain_route, ROUTE_FOUND), 403);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish scope");
    /* The catalogue's plan refused its input first; the 403 replaces that answer. */
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 403);
}
END_TEST

START_TEST(the_key_wins_over_a_refused_catalogue_input)
{
    reset();
    fake.input_refused = true;
    fake.key_unknown = true;
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 401);
    ck_assert_str_eq(fake.ran, "find key_begin plan_page key_finish");
}
END_TEST

START_TEST(a_refused_input_is_answered_and_the_handler_never_runs)
{
    reset();
    fake.input_refused = true;
    ck_assert_int_eq(run(&plain_route, ROUTE_FOUND), 400);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish scope input");
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 400);
    ck_assert_str_eq(fake.ran, "find key_begin plan_page key_finish scope");
}
END_TEST

START_TEST(a_key_over_its_share_plans_no_page)
{
    reset();
    fake.over_in_flight = true;
    ck_assert_int_eq(run(&catalogue_route, ROUTE_FOUND), 429);
    ck_assert_str_eq(fake.ran, "find key_begin key_finish");
}
END_TEST

START_TEST(a_keyless_route_skips_the_key_and_the_scope)
{
    reset();
    fake.key_malformed = true; /* would refuse, were it asked */
    ck_assert_int_eq(run(&keyless_route, ROUTE_FOUND), 200);
    ck_assert_str_eq(fake.ran, "find input handle");
}
END_TEST

Suite *pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a_plain_route_runs_every_check_in_order);
    tcase_add_test(tc, a_catalogue_route_plans_its_page_inside_the_key_check);
    tcase_add_test(tc, no_key_is_refused_before_the_route_is_said_missing);
    tcase_add_test(tc, a_valid_key_learns_the_route_is_missing_or_the_method_wrong);
    tcase_add_test(tc, a_scope_the_key_lacks_is_refused_for_each_kind);
    tcase_add_test(tc, a_read_scope_passes_for_each_kind);
    tcase_add_test(tc, the_scope_wins_over_a_refused_input);
    tcase_add_test(tc, the_key_wins_over_a_refused_catalogue_input);
    tcase_add_test(tc, a_refused_input_is_answered_and_the_handler_never_runs);
    tcase_add_test(tc, a_key_over_its_share_plans_no_page);
    tcase_add_test(tc, a_keyless_route_skips_the_key_and_the_scope);
    suite_add_tcase(s, tc);
    return s;
}
