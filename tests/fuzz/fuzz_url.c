/* url_parse: what it accepts is normalised only in case, parses again to the same result,
 * says where its path begins, and libcurl's own parser reads the same scheme, host and
 * port from it (market-webhookd hands libcurl url_parse's parts, not the text, but the
 * text is what clients are shown and may request themselves). Input: the URL bytes. */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <strings.h>

#include "fuzz.h"
#include "url.h"

static bool same_ignoring_case(const char *a, const char *b, size_t n)
{
    return strncasecmp(a, b, n) == 0;
}

static bool all_of(const char *s, const char *set)
{
    return strspn(s, set) == strlen(s);
}

static void check_host(const url_parts *u)
{
    uint8_t addr[16];
    char back[INET6_ADDRSTRLEN];
    switch (u->host_kind) {
    case URL_HOST_IPV4:
        FUZZ_CHECK(inet_pton(AF_INET, u->host, addr) == 1);
        FUZZ_CHECK(inet_ntop(AF_INET, addr, back, sizeof back) != NULL);
        FUZZ_CHECK(strcmp(back, u->host) == 0); /* the one canonical spelling */
        break;
    case URL_HOST_IPV6:
        FUZZ_CHECK(inet_pton(AF_INET6, u->host, addr) == 1);
        break;
    case URL_HOST_NAME: {
        FUZZ_CHECK(u->host[0] != '\0' && strlen(u->host) <= URL_HOST_MAX);
        FUZZ_CHECK(all_of(u->host, "abcdefghijklmnopqrstuvwxyz0123456789-."));
        const char *last = strrchr(u->host, '.');
        last = last != NULL ? last + 1 : u->host;
        FUZZ_CHECK(!all_of(last, "0123456789")); /* numeric last label: must be a quad */
        FUZZ_CHECK(inet_pton(AF_INET, u->host, addr) != 1);
        break;
    }
    }
}

/* libcurl must see the same host and port: two parsers reading one URL differently is
 * how a checked host turns into another one at delivery time. */
static void check_curl(const url_parts *u)
{
    CURLU *h = curl_url();
    FUZZ_CHECK(h != NULL);
    FUZZ_CHECK(curl_url_set(h, CURLUPART_URL, u->text, 0) == CURLUE_OK);
    char *scheme = NULL, *host = NULL, *port = NULL;
    FUZZ_CHECK(curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK);
    FUZZ_CHECK(strcmp(scheme, "https") == 0);
    FUZZ_CHECK(curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK);
    if (u->host_kind == URL_HOST_IPV6) {
        uint8_t ours[16], theirs[16];
        size_t n = strlen(host);
        FUZZ_CHECK(n > 2 && host[0] == '[' && host[n - 1] == ']');
        host[n - 1] = '\0';
        FUZZ_CHECK(inet_pton(AF_INET6, host + 1, theirs) == 1);
        FUZZ_CHECK(inet_pton(AF_INET6, u->host, ours) == 1);
        FUZZ_CHECK(memcmp(ours, theirs, 16) == 0);
    } else {
        FUZZ_CHECK(strcasecmp(host, u->host) == 0);
    }
    CURLUcode pc = curl_url_get(h, CURLUPART_PORT, &port, 0);
    if (u->port == 0)
        FUZZ_CHECK(pc == CURLUE_NO_PORT);
    else
        FUZZ_CHECK(pc == CURLUE_OK && strtoul(port, NULL, 10) == u->port);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(h);
}

static void check_accepted(const char *s, size_t n, const url_parts *u)
{
    FUZZ_CHECK(u->len == n && strlen(u->text) == n);
    FUZZ_CHECK(same_ignoring_case(u->text, s, n));
    FUZZ_CHECK(strncmp(u->text, "https://", 8) == 0);
    FUZZ_CHECK(strchr(u->text, '#') == NULL && strchr(u->text, '\\') == NULL);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(u->text[i] > 0x20 && u->text[i] < 0x7F);
    /* No userinfo; only the scheme and the authority change, and only in case. */
    size_t auth_end = 8 + strcspn(u->text + 8, "/?");
    FUZZ_CHECK(memchr(u->text, '@', auth_end) == NULL);
    FUZZ_CHECK(u->path == auth_end); /* the request target market-webhookd sends */
    FUZZ_CHECK(memcmp(u->text + auth_end, s + auth_end, n - auth_end) == 0);
    FUZZ_CHECK(u->port <= 65535);
    check_host(u);

    static url_parts again;
    FUZZ_CHECK(url_parse(u->text, u->len, &again) == URL_OK);
    FUZZ_CHECK(strcmp(again.text, u->text) == 0 && strcmp(again.host, u->host) == 0);
    FUZZ_CHECK(again.port == u->port && again.host_kind == u->host_kind);
    check_curl(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready)
        ready = curl_global_init(CURL_GLOBAL_NOTHING) == CURLE_OK;
    char *s = malloc(size ? size : 1); /* not NUL-terminated: reads past it are caught */
    memcpy(s, data, size);
    static url_parts u;
    url_status st = url_parse(s, size, &u);
    if (st == URL_OK) {
        FUZZ_CHECK(u.error == NULL);
        check_accepted(s, size, &u);
    } else {
        FUZZ_CHECK(u.error != NULL && u.error[0] != '\0');
        if (st == URL_NOT_HTTPS)
            FUZZ_CHECK(size >= 5 && strncasecmp(s, "http:", 5) == 0);
    }
    free(s);
    return 0;
}
