/* bench/search_peers/market.c: market's side of the search peers' comparison: its HTTP
 * page, GET /v1/products?q=...&sort=...&limit=...[&cursor=...], one request at a time on
 * one keep-alive connection (libcurl), the time of the whole request (nginx, a worker,
 * PostgreSQL, and the client's read of the JSON).
 *
 *   BASE_URL=http://127.0.0.1:18090 KEY=sk_test_... peers_market run PLAN [--requests N]
 *       [--budget S] [--only TEXT]
 *
 * Run it against a stack whose page cache is off (MARKET_PAGE_CACHE_MS=0: bench/run's
 * stack_up), so that every page is computed. The cursor is market's own next_cursor. */
#include <curl/curl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

typedef struct {
    CURL *curl;
    struct curl_slist *headers;
    const char *base;
    char *body;
    size_t len, cap;
} client_t;

static size_t on_body(char *p, size_t size, size_t n, void *ctx) {
    client_t *c = ctx;
    size_t add = size * n;
    if (c->len + add + 1 > c->cap) {
        c->cap = (c->len + add + 1) * 2;
        c->body = realloc(c->body, c->cap);
        if (!c->body) die("out of memory");
    }
    memcpy(c->body + c->len, p, add);
    c->len += add;
    c->body[c->len] = '\0';
    return add;
}

static int page(void *ctx, const shape_t *shape, int sort, int limit, const char *cursor, page_t *out) {
    client_t *c = ctx;
    char url[4096];
    char *q = curl_easy_escape(c->curl, shape->q, 0);
    char *cur = cursor ? curl_easy_escape(c->curl, cursor, 0) : NULL;
    snprintf(url, sizeof url, "%s/v1/products?q=%s&sort=%s&limit=%d%s%s", c->base, q, sort_names[sort], limit,
             cur ? "&cursor=" : "", cur ? cur : "");
    curl_free(q);
    curl_free(cur);
    c->len = 0;
    curl_easy_setopt(c->curl, CURLOPT_URL, url);
    CURLcode rc = curl_easy_perform(c->curl);
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200) {
        fprintf(stderr, "market: %s: %s %ld %s\n", url, curl_easy_strerror(rc), status, c->body ? c->body : "");
        return -1;
    }
    json_object *root = json_tokener_parse(c->body), *data, *next;
    if (!root || !json_object_object_get_ex(root, "data", &data) || !json_object_is_type(data, json_type_array) ||
        !json_object_object_get_ex(root, "next_cursor", &next)) {
        fprintf(stderr, "market: %s: not a list page: %.200s\n", url, c->body);
        json_object_put(root);
        return -1;
    }
    size_t n = json_object_array_length(data);
    if (n > PAGE_MAX) n = PAGE_MAX;
    for (size_t i = 0; i < n; i++) {
        json_object *item = json_object_array_get_idx(data, i), *id;
        if (!json_object_object_get_ex(item, "id", &id)) die("an item without id");
        snprintf(out->ids[out->n++], ID_MAX, "%s", json_object_get_string(id));
    }
    if (json_object_is_type(next, json_type_string)) {
        out->has_next = 1;
        snprintf(out->next, sizeof out->next, "%s", json_object_get_string(next));
    }
    json_object_put(root);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "run") != 0)
        die("usage: BASE_URL=... KEY=... peers_market run PLAN [--requests N] [--budget S] [--only TEXT]");
    const char *base = getenv("BASE_URL"), *key = getenv("KEY");
    if (!base || !key) die("BASE_URL and KEY are required");
    run_opts_t o;
    run_opts_parse(&o, argc, argv, 3);
    plan_t plan;
    plan_read(argv[2], &plan);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    client_t c = {.curl = curl_easy_init(), .base = base};
    if (!c.curl) die("curl_easy_init");
    char auth[512];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
    c.headers = curl_slist_append(NULL, auth);
    curl_easy_setopt(c.curl, CURLOPT_HTTPHEADER, c.headers);
    curl_easy_setopt(c.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c.curl, CURLOPT_WRITEDATA, &c);
    curl_easy_setopt(c.curl, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c.curl, CURLOPT_TIMEOUT, 60L);
    int bad = run_all("market", &plan, page, &c, &o);
    curl_slist_free_all(c.headers);
    curl_easy_cleanup(c.curl);
    return bad ? 3 : 0;
}
