/* api/routes: market-api's route table (docs/contract.md sections 2, 6 and 13): which
 * route a method and path find, with which scope, under which settings; then the inputs a
 * route declares, read into r->in or refused with the input at fault. app/api/http/route's matcher
 * itself is test_route.c's. */
#include <fcgiapp.h>
#include <string.h>

#include "api/http/routes.h"
#include "unit.h"

static arena a;
static buf body, headers;
static worker w;
static request r;
static market_config cfg;

/* The request's body, as FastCGI would hand it over: all of it at once. */
static FCGX_Stream in;
static FCGX_Request fcgi;

static void end_of_body(FCGX_Stream *stream)
{
    stream->isClosed = 1;
}

static void setup(void)
{
    arena_init(&a, 16 * 1024);
    buf_init(&body, 1024);
    buf_init(&headers, 256);
    memset(&cfg, 0, sizeof cfg);
    cfg.api_extensions = CONFIG_EXT_WEBHOOK_MANAGEMENT;
    cfg.download_ttl = 900;
    cfg.webhook_secret_grace = 86400;
    routes_init("/files", &cfg);
}

static void teardown(void)
{
    if (r.json_body != NULL)
        json_object_put(r.json_body);
    memset(&r, 0, sizeof r);
    buf_free(&body);
    buf_free(&headers);
    arena_free(&a);
}

/* A fresh request of method and path (with its query after '?'), without a body. */
static request *req(const char *method, const char *target)
{
    if (r.json_body != NULL) /* the previous request's */
        json_object_put(r.json_body);
    memset(&r, 0, sizeof r);
    memset(&w, 0, sizeof w);
    w.cfg = cfg;
    r.w = &w;
    r.arena = &a;
    r.body = &body;
    r.headers = &headers;
    r.request_id = "req_test";
    r.content_length = -1;
    buf_clear(&body);
    buf_clear(&headers);
    r.method = method;
    r.path = target;
    const char *q = strchr(target, '?');
    r.path_len = q != NULL ? (size_t)(q - target) : strlen(target);
    r.query = q != NULL ? q + 1 : "";
    return &r;
}

/* The request's body, application/json. */
static void with_body(const char *json)
{
    memset(&in, 0, sizeof in);
    in.rdNext = (unsigned char *)json;
    in.stop = in.rdNext + strlen(json);
    in.isReader = 1;
    in.fillBuffProc = end_of_body;
    fcgi.in = &in;
    r.fcgi = &fcgi;
    r.content_type = "application/json";
    r.content_length = (long long)strlen(json);
}

static route_fault find(const char *method, const char *path)
{
    return routes_find(req(method, path));
}

/* Every route of the specification and of the extension, with the scope the contract
 * gives it (section 2; section 13 for the extension's) and its label. */
static const struct {
    const char *method, *path, *name, *scope, *label;
} api_routes[] = {
    {"GET", "/v1/products", "products_list", "products:read", "GET /v1/products"},
    {"GET", "/v1/products/prod_1", "product_get", "products:read", "GET /v1/products/:id"},
    {"GET", "/v1/sellers/pixelforge", "seller_get", "products:read", "GET /v1/sellers/:id"},
    {"GET", "/v1/orders", "orders_list", "orders:read", "GET /v1/orders"},
    {"POST", "/v1/downloads/dl_1/link", "download_link", "downloads:write",
     "POST /v1/downloads/:id/link"},
    {"POST", "/v1/webhooks", "webhooks_create", "webhooks:write", "POST /v1/webhooks"},
    {"GET", "/v1/webhooks", "webhooks_list", "webhooks:read", "GET /v1/webhooks"},
    {"GET", "/v1/webhooks/we_1", "webhooks_get", "webhooks:read", "GET /v1/webhooks/:id"},
    {"POST", "/v1/webhooks/we_1", "webhooks_update", "webhooks:write", "POST /v1/webhooks/:id"},
    {"DELETE", "/v1/webhooks/we_1", "webhooks_delete", "webhooks:write", "DELETE /v1/webhooks/:id"},
    {"POST", "/v1/webhooks/we_1/rotate_secret", "webhooks_rotate_secret", "webhooks:write",
     "POST /v1/webhooks/:id/rotate_secret"},
    {"POST", "/v1/webhooks/we_1/test", "webhooks_test", "webhooks:write",
     "POST /v1/webhooks/:id/test"},
    {"GET", "/v1/events", "events_list", "webhooks:read", "GET /v1/events"},
    {"GET", "/v1/events/evt_1", "events_get", "webhooks:read", "GET /v1/events/:id"},
};
#define N_API_ROUTES (sizeof api_routes / sizeof api_routes[0])

START_TEST(each_route_is_found_with_its_method_scope_and_label)
{
    for (size_t i = 0; i < N_API_ROUTES; i++) {
        ck_assert_msg(find(api_routes[i].method, api_routes[i].path) == ROUTE_FOUND, "%s %s",
                      api_routes[i].method, api_routes[i].path);
        ck_assert_str_eq(r.route->name, api_routes[i].name);
        ck_assert_str_eq(r.route->scope, api_routes[i].scope);
        ck_assert_str_eq(r.route_label, api_routes[i].label);
        ck_assert_ptr_null(r.route->ops);
    }
}
END_TEST

START_TEST(the_path_parameter_is_the_raw_segment)
{
    ck_assert_int_eq(find("POST", "/v1/webhooks/we_%41b/rotate_secret"), ROUTE_FOUND);
    ck_assert_int_eq(r.match.param_len, strlen("we_%41b"));
    ck_assert(strncmp(r.match.param, "we_%41b", r.match.param_len) == 0);
}
END_TEST

START_TEST(an_unknown_path_is_404_with_no_route)
{
    static const char *const paths[] = {
        "/",
        "/v1",
        "/v1/product",
        "/v1/products/",
        "/v1/nope",
        "/v1/orders/ord_1",
        "/v1/products/prod_1/x",
        "/v1/downloads/dl_1",
        "/healthz",
        "/metrics",
        "/files",
        "/files/",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        ck_assert_msg(find("GET", paths[i]) == ROUTE_NOT_FOUND, "%s", paths[i]);
        ck_assert_ptr_null(r.route);
        ck_assert_ptr_null(r.route_label);
    }
}
END_TEST

START_TEST(another_method_is_405_with_the_paths_methods)
{
    static const struct {
        const char *method, *path, *allow;
    } cases[] = {
        {"DELETE", "/v1/products", "GET"},
        {"POST", "/v1/products/prod_1", "GET"},
        {"HEAD", "/v1/orders", "GET"},
        {"GET", "/v1/downloads/dl_1/link", "POST"},
        {"PUT", "/v1/webhooks", "GET, POST"},
        {"PATCH", "/v1/webhooks/we_1", "GET, POST, DELETE"},
        {"GET", "/v1/webhooks/we_1/test", "POST"},
        {"POST", "/files/tok", "GET, HEAD"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(find(cases[i].method, cases[i].path) == ROUTE_METHOD_NOT_ALLOWED, "%s %s",
                      cases[i].method, cases[i].path);
        ck_assert_str_eq(r.match.allow, cases[i].allow);
        ck_assert_ptr_nonnull(r.route);
    }
}
END_TEST

START_TEST(operational_routes_only_for_their_mark)
{
    ck_assert_int_eq(routes_find(req("GET", "/healthz")), ROUTE_NOT_FOUND);
    req("GET", "/healthz");
    r.ops_mark = "healthz";
    ck_assert_int_eq(routes_find(&r), ROUTE_FOUND);
    ck_assert_str_eq(r.route->name, "healthz");
    ck_assert_ptr_null(r.route->scope); /* no key */
    req("HEAD", "/metrics");
    r.ops_mark = "metrics";
    ck_assert_int_eq(routes_find(&r), ROUTE_FOUND);
    ck_assert_str_eq(r.route->name, "metrics");
    /* A mark names one route: /healthz is not found under the mark of /metrics. */
    req("GET", "/healthz");
    r.ops_mark = "metrics";
    ck_assert_int_eq(routes_find(&r), ROUTE_NOT_FOUND);
    req("POST", "/metrics");
    r.ops_mark = "metrics";
    ck_assert_int_eq(routes_find(&r), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(r.match.allow, "GET, HEAD");
}
END_TEST

START_TEST(extension_routes_are_absent_unless_turned_on)
{
    cfg.api_extensions = 0;
    routes_init("/files", &cfg);
    static const char *const off[][2] = {
        {"GET", "/v1/webhooks/we_1"},       {"POST", "/v1/webhooks/we_1"},
        {"DELETE", "/v1/webhooks/we_1"},    {"POST", "/v1/webhooks/we_1/rotate_secret"},
        {"POST", "/v1/webhooks/we_1/test"}, {"GET", "/v1/events"},
        {"GET", "/v1/events/evt_1"},
    };
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        ck_assert_msg(find(off[i][0], off[i][1]) == ROUTE_NOT_FOUND, "%s %s", off[i][0], off[i][1]);
    /* POST /v1/webhooks is the specification's: its path is still a route's. */
    ck_assert_int_eq(find("GET", "/v1/webhooks"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(r.match.allow, "POST");
    ck_assert_int_eq(find("POST", "/v1/webhooks"), ROUTE_FOUND);
    for (size_t i = 0; i < 5; i++) /* the specification's routes, all there */
        ck_assert_int_eq(find(api_routes[i].method, api_routes[i].path), ROUTE_FOUND);

    cfg.api_extensions = CONFIG_EXT_WEBHOOK_MANAGEMENT; /* and back on */
    routes_init("/files", &cfg);
    ck_assert_int_eq(find("GET", "/v1/events/evt_1"), ROUTE_FOUND);
    ck_assert_str_eq(r.route_label, "GET /v1/events/:id");
}
END_TEST

START_TEST(the_download_location_is_under_files_prefix)
{
    ck_assert_int_eq(find("GET", "/files/tok_1"), ROUTE_FOUND);
    ck_assert_str_eq(r.route->name, "file");
    ck_assert_ptr_null(r.route->scope); /* the token is the credential */
    ck_assert_str_eq(r.route_label, "GET, HEAD /files/:token");

    routes_init("/dl/v2", &cfg);
    ck_assert_int_eq(find("HEAD", "/dl/v2/tok_1"), ROUTE_FOUND);
    ck_assert_str_eq(r.route->name, "file");
    ck_assert_str_eq(r.route_label, "GET, HEAD /dl/v2/:token");
    ck_assert_int_eq(find("GET", "/files/tok_1"), ROUTE_NOT_FOUND);

    routes_init("", &cfg); /* a base URL without a path: no download location */
    ck_assert_int_eq(find("GET", "/files/tok_1"), ROUTE_NOT_FOUND);
    ck_assert_int_eq(find("GET", "/v1/products"), ROUTE_FOUND);
}
END_TEST

START_TEST(routes_have_their_metrics_slot)
{
    ck_assert_uint_eq(routes_slot(NULL), 0);
    for (size_t i = 0; i < ROUTES_COUNT; i++)
        ck_assert_uint_eq(routes_slot(routes_at(i)), i + 1);
    ck_assert_int_eq(find("GET", "/v1/orders"), ROUTE_FOUND);
    ck_assert_str_eq(routes_at(routes_slot(r.route) - 1)->name, "orders_list");
}
END_TEST

/* Finds the route of method and target, then reads its inputs. */
static bool read_input(const char *method, const char *target)
{
    ck_assert_int_eq(find(method, target), ROUTE_FOUND);
    return routes_read_input(&r);
}

START_TEST(query_defaults_are_filled)
{
    ck_assert(read_input("GET", "/v1/products"));
    ck_assert_int_eq(r.in.limit, 20);
    ck_assert_int_eq(r.in.sort, -1);
    ck_assert_ptr_null(r.in.cursor);
    ck_assert_ptr_null(r.in.q);
    ck_assert(read_input("GET", "/v1/orders?limit=7&status=refunded"));
    ck_assert_int_eq(r.in.limit, 7);
    ck_assert_int_eq(r.in.status, 1); /* orders_statuses: paid, refunded */
    ck_assert(read_input("GET", "/v1/sellers/pixelforge"));
    ck_assert_str_eq(r.in.id, "pixelforge");
    ck_assert_int_eq(r.in.limit, 20);
}
END_TEST

START_TEST(a_query_parameter_out_of_range_is_400_naming_it)
{
    static const struct {
        const char *target, *code, *param;
    } cases[] = {
        {"/v1/products?limit=0", "parameter_invalid", "limit"},
        {"/v1/products?limit=101", "parameter_invalid", "limit"},
        {"/v1/products?sort=cheapest", "parameter_invalid", "sort"},
        {"/v1/products?min_price=-1", "parameter_invalid", "min_price"},
        {"/v1/orders?status=open", "parameter_invalid", "status"},
        {"/v1/events?created_gte=yesterday", "parameter_invalid", "created_gte"},
        {"/v1/products/prod_1?limit=5", "parameter_unknown", "limit"},
        {"/v1/orders?limit=5&limit=6", "parameter_duplicated", "limit"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(!read_input("GET", cases[i].target), "%s", cases[i].target);
        ck_assert_int_eq(r.status, 400);
        ck_assert_str_eq(unit_error_field(body.data, "code"), cases[i].code);
        ck_assert_str_eq(unit_error_field(body.data, "param"), cases[i].param);
    }
}
END_TEST

START_TEST(a_path_parameter_of_another_shape_names_nothing)
{
    static const char *const targets[] = {"/v1/products/nope", "/v1/sellers/Pixel%20Forge",
                                          "/v1/webhooks/prod_1", "/v1/events/we_1"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        ck_assert_msg(!read_input("GET", targets[i]), "%s", targets[i]);
        ck_assert_int_eq(r.status, 404);
        ck_assert_str_eq(unit_error_field(body.data, "code"), "resource_missing");
        ck_assert_str_eq(unit_error_field(body.data, "param"), "id");
    }
}
END_TEST

START_TEST(body_defaults_are_the_settings)
{
    ck_assert_int_eq(find("POST", "/v1/downloads/dl_1/link"), ROUTE_FOUND);
    with_body("{}");
    ck_assert(routes_read_input(&r));
    ck_assert_str_eq(r.in.id, "dl_1");
    ck_assert_int_eq(r.in.expires_in, 900);

    cfg.download_ttl = 1200;
    cfg.webhook_secret_grace = 3600;
    routes_init("/files", &cfg);
    ck_assert_int_eq(find("POST", "/v1/downloads/dl_1/link"), ROUTE_FOUND);
    with_body("{}");
    ck_assert(routes_read_input(&r));
    ck_assert_int_eq(r.in.expires_in, 1200);
    ck_assert_int_eq(find("POST", "/v1/webhooks/we_1/rotate_secret"), ROUTE_FOUND);
    with_body("{}");
    ck_assert(routes_read_input(&r));
    ck_assert_int_eq(r.in.expire_old_in, 3600);
}
END_TEST

START_TEST(a_body_field_out_of_range_is_400_naming_it)
{
    ck_assert_int_eq(find("POST", "/v1/webhooks/we_1/rotate_secret"), ROUTE_FOUND);
    with_body("{\"expire_old_in\": 604801}");
    ck_assert(!routes_read_input(&r));
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(unit_error_field(body.data, "code"), "parameter_invalid");
    ck_assert_str_eq(unit_error_field(body.data, "param"), "expire_old_in");

    ck_assert_int_eq(find("POST", "/v1/webhooks/we_1/test"), ROUTE_FOUND);
    with_body("{\"url\": \"https://example.com/\"}"); /* a body of no field */
    ck_assert(!routes_read_input(&r));
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(unit_error_field(body.data, "code"), "parameter_unknown");
    ck_assert_str_eq(unit_error_field(body.data, "param"), "url");
}
END_TEST

Suite *routes_suite(void)
{
    Suite *s = suite_create("routes");
    TCase *find_case = tcase_create("find");
    tcase_add_checked_fixture(find_case, setup, teardown);
    tcase_add_test(find_case, each_route_is_found_with_its_method_scope_and_label);
    tcase_add_test(find_case, the_path_parameter_is_the_raw_segment);
    tcase_add_test(find_case, an_unknown_path_is_404_with_no_route);
    tcase_add_test(find_case, another_method_is_405_with_the_paths_methods);
    tcase_add_test(find_case, operational_routes_only_for_their_mark);
    tcase_add_test(find_case, extension_routes_are_absent_unless_turned_on);
    tcase_add_test(find_case, the_download_location_is_under_files_prefix);
    tcase_add_test(find_case, routes_have_their_metrics_slot);
    suite_add_tcase(s, find_case);
    TCase *input = tcase_create("read_input");
    tcase_add_checked_fixture(input, setup, teardown);
    tcase_add_test(input, query_defaults_are_filled);
    tcase_add_test(input, a_query_parameter_out_of_range_is_400_naming_it);
    tcase_add_test(input, a_path_parameter_of_another_shape_names_nothing);
    tcase_add_test(input, body_defaults_are_the_settings);
    tcase_add_test(input, a_body_field_out_of_range_is_400_naming_it);
    suite_add_tcase(s, input);
    return s;
}
