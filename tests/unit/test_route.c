/* route: method and raw path to one of the six routes or the files location. */
#include <string.h>

#include "route.h"
#include "unit.h"

#define FILES "/files"

static route_match m;

static match_result find(const char *method, const char *path)
{
    return route_find(method, path, strlen(path), FILES, &m);
}

/* Expects method path to match route, with param (NULL: none) and scope. */
static void matches(const char *method, const char *path, route_id route, const char *param,
                    const char *scope)
{
    ck_assert_msg(find(method, path) == MATCH_OK, "%s %s did not match", method, path);
    ck_assert_int_eq(m.route, route);
    if (param == NULL) {
        ck_assert_ptr_null(m.param);
        ck_assert_uint_eq(m.param_len, 0);
    } else {
        ck_assert_uint_eq(m.param_len, strlen(param));
        ck_assert_mem_eq(m.param, param, m.param_len);
        /* The parameter points into the path, as sent. */
        ck_assert(m.param >= path && m.param + m.param_len <= path + strlen(path));
    }
    if (scope == NULL)
        ck_assert_ptr_null(m.scope);
    else
        ck_assert_str_eq(m.scope, scope);
}

START_TEST(the_six_routes)
{
    matches("GET", "/v1/products", ROUTE_PRODUCTS_LIST, NULL, "products:read");
    matches("GET", "/v1/products/prod_8f3K", ROUTE_PRODUCT_GET, "prod_8f3K", "products:read");
    matches("GET", "/v1/sellers/pixelforge", ROUTE_SELLER_GET, "pixelforge", "products:read");
    matches("GET", "/v1/orders", ROUTE_ORDERS_LIST, NULL, "orders:read");
    matches("POST", "/v1/downloads/dl_1/link", ROUTE_DOWNLOAD_LINK, "dl_1", "downloads:write");
    matches("POST", "/v1/webhooks", ROUTE_WEBHOOKS_CREATE, NULL, "webhooks:write");
}
END_TEST

START_TEST(parameters_stay_raw)
{
    matches("GET", "/v1/products/prod%5F1", ROUTE_PRODUCT_GET, "prod%5F1", "products:read");
    matches("GET", "/v1/products/%2F", ROUTE_PRODUCT_GET, "%2F", "products:read");
    matches("GET", "/v1/products/...", ROUTE_PRODUCT_GET, "...", "products:read");
    matches("GET", "/v1/sellers/a.b", ROUTE_SELLER_GET, "a.b", "products:read");
}
END_TEST

START_TEST(files_location)
{
    matches("GET", "/files/tok_abc", ROUTE_FILE, "tok_abc", NULL);
    matches("HEAD", "/files/tok_abc", ROUTE_FILE, "tok_abc", NULL);
    ck_assert_int_eq(find("POST", "/files/tok_abc"), MATCH_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(m.allow, "GET, HEAD");
    ck_assert_int_eq(find("DELETE", "/files/tok_abc"), MATCH_METHOD_NOT_ALLOWED);
}
END_TEST

/* Expects method path to be a 405 whose Allow header is allow. */
static void not_allowed(const char *method, const char *path, const char *allow)
{
    ck_assert_msg(find(method, path) == MATCH_METHOD_NOT_ALLOWED, "%s %s", method, path);
    ck_assert_str_eq(m.allow, allow);
}

START_TEST(other_methods_are_405)
{
    not_allowed("POST", "/v1/products", "GET");
    not_allowed("HEAD", "/v1/products", "GET");
    not_allowed("DELETE", "/v1/products/prod_1", "GET");
    not_allowed("PUT", "/v1/sellers/pixelforge", "GET");
    not_allowed("PATCH", "/v1/orders", "GET");
    not_allowed("GET", "/v1/downloads/dl_1/link", "POST");
    not_allowed("GET", "/v1/webhooks", "POST");
    not_allowed("get", "/v1/products", "GET");
    not_allowed("", "/v1/products", "GET");
}
END_TEST

START_TEST(everything_else_is_404)
{
    static const char *const paths[] = {
        "",
        "/",
        "/v1",
        "/v1/",
        "v1/products",
        "/v1/products/",
        "/v1/products//",
        "/v1/products/a/",
        "/v1/products/a/b",
        "/v1//products",
        "//v1/products",
        "/v1/orders/",
        "/v1/orders/ord_1",
        "/v1/webhooks/",
        "/v1/webhooks/we_1",
        "/v1/sellers",
        "/v1/sellers/",
        "/v1/downloads",
        "/v1/downloads/dl_1",
        "/v1/downloads//link",
        "/v1/downloads/dl_1/link/",
        "/v1/downloads/dl_1/links",
        "/v1/Products",
        "/V1/products",
        "/v2/products",
        "/v1/productsx",
        "/v1/products?limit=1",
        "/v1/products/.",
        "/v1/products/..",
        "/v1/sellers/..",
        "/v1/downloads/../link",
        "/v1/downloads/./link",
        "/v1/products/../orders",
        "/files",
        "/files/",
        "/files/a/b",
        "/files/a/",
        "/files//a",
        "/files/..",
        "/files/.",
        "/filesx/tok",
        "/FILES/tok",
    };
    static const char *const methods[] = {"GET", "POST", "HEAD", "DELETE"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
            ck_assert_msg(find(methods[k], paths[i]) == MATCH_NOT_FOUND, "%s \"%s\" matched",
                          methods[k], paths[i]);
            ck_assert_int_eq(m.route, ROUTE_NONE);
            ck_assert_ptr_null(m.param);
            ck_assert_ptr_null(m.allow);
        }
    }
}
END_TEST

START_TEST(path_length_bounds_the_path)
{
    const char *path = "/v1/products/prod_1/extra";
    ck_assert_int_eq(route_find("GET", path, 12, FILES, &m), MATCH_OK);
    ck_assert_int_eq(m.route, ROUTE_PRODUCTS_LIST);
    ck_assert_int_eq(route_find("GET", path, 19, FILES, &m), MATCH_OK);
    ck_assert_int_eq(m.route, ROUTE_PRODUCT_GET);
    ck_assert_uint_eq(m.param_len, 6);
    ck_assert_int_eq(route_find("GET", path, strlen(path), FILES, &m), MATCH_NOT_FOUND);
    /* A NUL inside the length is part of the path, not its end. */
    ck_assert_int_eq(route_find("GET", "/v1/orders\0x", 12, FILES, &m), MATCH_NOT_FOUND);
}
END_TEST

START_TEST(files_prefix_is_configurable)
{
    const char *path = "/dl/tok_1";
    ck_assert_int_eq(route_find("GET", path, strlen(path), "/dl", &m), MATCH_OK);
    ck_assert_int_eq(m.route, ROUTE_FILE);
    ck_assert_int_eq(route_find("GET", path, strlen(path), FILES, &m), MATCH_NOT_FOUND);
    ck_assert_int_eq(route_find("GET", "/x", 2, "", &m), MATCH_NOT_FOUND);
}
END_TEST

Suite *route_suite(void)
{
    Suite *s = suite_create("route");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_six_routes);
    tcase_add_test(tc, parameters_stay_raw);
    tcase_add_test(tc, files_location);
    tcase_add_test(tc, other_methods_are_405);
    tcase_add_test(tc, everything_else_is_404);
    tcase_add_test(tc, path_length_bounds_the_path);
    tcase_add_test(tc, files_prefix_is_configurable);
    suite_add_tcase(s, tc);
    return s;
}
