/* route: method and raw path to an entry of a route table, here one shaped like the API's
 * (app/api/http/routes.c): its routes, several of them sharing a path, and the download
 * location. */
#include <string.h>

#include "route.h"
#include "unit.h"

typedef struct {
    route_spec spec; /* first, as app/api/http/route wants */
    const char *name;
} entry;

static const entry table[] = {
    {{"GET, HEAD", "/files/:token"}, "file"},
    {{"GET", "/v1/products"}, "products_list"},
    {{"GET", "/v1/products/:id"}, "product_get"},
    {{"GET", "/v1/sellers/:id"}, "seller_get"},
    {{"GET", "/v1/orders"}, "orders_list"},
    {{"POST", "/v1/downloads/:id/link"}, "download_link"},
    {{"GET", "/v1/webhooks"}, "webhooks_list"},
    {{"POST", "/v1/webhooks"}, "webhooks_create"},
    {{"GET", "/v1/webhooks/:id"}, "webhooks_get"},
    {{"POST", "/v1/webhooks/:id"}, "webhooks_update"},
    {{"DELETE", "/v1/webhooks/:id"}, "webhooks_delete"},
    {{"POST", "/v1/webhooks/:id/rotate_secret"}, "webhooks_rotate_secret"},
    {{"GET", NULL}, "switched_off"},
};
#define N_ENTRIES (sizeof table / sizeof table[0])

static route_match m;

static route_fault find_n(const char *method, const char *path, size_t len)
{
    return route_table_find(table, N_ENTRIES, sizeof table[0], method, path, len, &m);
}

static route_fault find(const char *method, const char *path)
{
    return find_n(method, path, strlen(path));
}

static const char *found_name(void)
{
    return table[m.index].name;
}

/* Expects method path to match the entry named name, with param (NULL: none) whose
 * name in the pattern is param_name. */
static void matches(const char *method, const char *path, const char *name, const char *param,
                    const char *param_name)
{
    ck_assert_msg(find(method, path) == ROUTE_FOUND, "%s %s did not match", method, path);
    ck_assert_str_eq(found_name(), name);
    if (param == NULL) {
        ck_assert_ptr_null(m.param);
        ck_assert_uint_eq(m.param_len, 0);
        ck_assert_ptr_null(m.param_name);
    } else {
        ck_assert_uint_eq(m.param_len, strlen(param));
        ck_assert_mem_eq(m.param, param, m.param_len);
        /* The parameter points into the path, as sent. */
        ck_assert(m.param >= path && m.param + m.param_len <= path + strlen(path));
        ck_assert_uint_eq(m.param_name_len, strlen(param_name));
        ck_assert_mem_eq(m.param_name, param_name, m.param_name_len);
    }
}

START_TEST(the_six_routes)
{
    matches("GET", "/v1/products", "products_list", NULL, NULL);
    matches("GET", "/v1/products/prod_8f3K", "product_get", "prod_8f3K", "id");
    matches("GET", "/v1/sellers/pixelforge", "seller_get", "pixelforge", "id");
    matches("GET", "/v1/orders", "orders_list", NULL, NULL);
    matches("POST", "/v1/downloads/dl_1/link", "download_link", "dl_1", "id");
    matches("POST", "/v1/webhooks", "webhooks_create", NULL, NULL);
}
END_TEST

START_TEST(one_path_several_methods)
{
    matches("GET", "/v1/webhooks", "webhooks_list", NULL, NULL);
    matches("POST", "/v1/webhooks", "webhooks_create", NULL, NULL);
    matches("GET", "/v1/webhooks/we_1", "webhooks_get", "we_1", "id");
    matches("POST", "/v1/webhooks/we_1", "webhooks_update", "we_1", "id");
    matches("DELETE", "/v1/webhooks/we_1", "webhooks_delete", "we_1", "id");
    matches("POST", "/v1/webhooks/we_1/rotate_secret", "webhooks_rotate_secret", "we_1", "id");
    /* A 405 names the first entry of the path and every method of it. */
    ck_assert_int_eq(find("PUT", "/v1/webhooks/we_1"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(found_name(), "webhooks_get");
    ck_assert_str_eq(m.allow, "GET, POST, DELETE");
    ck_assert_uint_eq(m.param_len, 4);
    ck_assert_mem_eq(m.param, "we_1", 4);
    ck_assert_int_eq(find("DELETE", "/v1/webhooks"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(m.allow, "GET, POST");
    ck_assert_int_eq(find("GET", "/v1/webhooks/we_1/rotate_secret"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(m.allow, "POST");
    /* A match clears what an earlier 405 left. */
    matches("GET", "/v1/products", "products_list", NULL, NULL);
    ck_assert_str_eq(m.allow, "");
}
END_TEST

START_TEST(parameters_stay_raw)
{
    matches("GET", "/v1/products/prod%5F1", "product_get", "prod%5F1", "id");
    matches("GET", "/v1/products/%2F", "product_get", "%2F", "id");
    matches("GET", "/v1/products/...", "product_get", "...", "id");
    matches("GET", "/v1/sellers/a.b", "seller_get", "a.b", "id");
}
END_TEST

START_TEST(files_location)
{
    matches("GET", "/files/tok_abc", "file", "tok_abc", "token");
    matches("HEAD", "/files/tok_abc", "file", "tok_abc", "token");
    ck_assert_int_eq(find("POST", "/files/tok_abc"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(found_name(), "file");
    ck_assert_int_eq(find("DELETE", "/files/tok_abc"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_int_eq(find("GET,", "/files/tok_abc"), ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_int_eq(find("HEA", "/files/tok_abc"), ROUTE_METHOD_NOT_ALLOWED);
}
END_TEST

/* Expects method path to be a 405 whose Allow header is allow. */
static void not_allowed(const char *method, const char *path, const char *allow)
{
    ck_assert_msg(find(method, path) == ROUTE_METHOD_NOT_ALLOWED, "%s %s", method, path);
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
    not_allowed("PUT", "/v1/webhooks", "GET, POST");
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
        "/v1/webhooks/we_1/",
        "/v1/webhooks/we_1/test/x",
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
            ck_assert_msg(find(methods[k], paths[i]) == ROUTE_NOT_FOUND, "%s \"%s\" matched",
                          methods[k], paths[i]);
            ck_assert_uint_eq(m.index, 0);
            ck_assert_ptr_null(m.param);
            ck_assert_ptr_null(m.param_name);
        }
    }
}
END_TEST

START_TEST(path_length_bounds_the_path)
{
    const char *path = "/v1/products/prod_1/extra";
    ck_assert_int_eq(find_n("GET", path, 12), ROUTE_FOUND);
    ck_assert_str_eq(found_name(), "products_list");
    ck_assert_int_eq(find_n("GET", path, 19), ROUTE_FOUND);
    ck_assert_str_eq(found_name(), "product_get");
    ck_assert_uint_eq(m.param_len, 6);
    ck_assert_int_eq(find_n("GET", path, strlen(path)), ROUTE_NOT_FOUND);
    /* A NUL inside the length is part of the path, not its end. */
    ck_assert_int_eq(find_n("GET", "/v1/orders\0x", 12), ROUTE_NOT_FOUND);
}
END_TEST

START_TEST(first_entry_wins_and_stride_is_honoured)
{
    /* A table whose entries are larger than a route_spec, and two whose patterns match. */
    static const struct {
        route_spec spec;
        char padding[40];
        int id;
    } wide[] = {
        {{"GET", "/a/:x"}, "", 1},
        {{"POST", "/a/b"}, "", 2},
        {{"GET", "/c"}, "", 3},
    };
    ck_assert_int_eq(route_table_find(wide, 3, sizeof wide[0], "GET", "/a/b", 4, &m), ROUTE_FOUND);
    ck_assert_int_eq(wide[m.index].id, 1);
    /* The method picks among the entries whose patterns match. */
    ck_assert_int_eq(route_table_find(wide, 3, sizeof wide[0], "POST", "/a/b", 4, &m), ROUTE_FOUND);
    ck_assert_int_eq(wide[m.index].id, 2);
    ck_assert_int_eq(route_table_find(wide, 3, sizeof wide[0], "PUT", "/a/b", 4, &m),
                     ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_int_eq(wide[m.index].id, 1);
    ck_assert_str_eq(m.allow, "GET, POST");
    ck_assert_int_eq(route_table_find(wide, 3, sizeof wide[0], "GET", "/c", 2, &m), ROUTE_FOUND);
    ck_assert_int_eq(wide[m.index].id, 3);
    /* Counted entries only: the third is outside a table of two. */
    ck_assert_int_eq(route_table_find(wide, 2, sizeof wide[0], "GET", "/c", 2, &m),
                     ROUTE_NOT_FOUND);
    ck_assert_int_eq(route_table_find(wide, 0, sizeof wide[0], "GET", "/c", 2, &m),
                     ROUTE_NOT_FOUND);
}
END_TEST

START_TEST(method_lists)
{
    ck_assert(route_method_listed("GET", "GET"));
    ck_assert(route_method_listed("GET, HEAD", "HEAD"));
    ck_assert(route_method_listed("GET,HEAD", "HEAD"));
    ck_assert(!route_method_listed("GET, HEAD", "GE"));
    ck_assert(!route_method_listed("GET, HEAD", "GET, HEAD"));
    ck_assert(!route_method_listed("GET, HEAD", ""));
    ck_assert(!route_method_listed("GET", "get"));
    ck_assert(!route_method_listed("", "GET"));
}
END_TEST

Suite *route_suite(void)
{
    Suite *s = suite_create("route");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, the_six_routes);
    tcase_add_test(tc, one_path_several_methods);
    tcase_add_test(tc, parameters_stay_raw);
    tcase_add_test(tc, files_location);
    tcase_add_test(tc, other_methods_are_405);
    tcase_add_test(tc, everything_else_is_404);
    tcase_add_test(tc, path_length_bounds_the_path);
    tcase_add_test(tc, first_entry_wins_and_stride_is_honoured);
    tcase_add_test(tc, method_lists);
    suite_add_tcase(s, tc);
    return s;
}
