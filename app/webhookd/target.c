/* target: where a delivery may connect, decided apart from the drainer so that the
 * server-side request forgery rules (libcurl's own URL parse, every address checked, the
 * pin) are unit tested without a network or a resolver. */
#include "target.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mem.h"
#include "netcheck.h"

/* The URL's host, as libcurl will use it (punycode), lower-cased. */
static bool url_host(CURLU *u, char *host, size_t hostsz)
{
    char *h = NULL;
    if (curl_url_get(u, CURLUPART_HOST, &h, CURLU_PUNYCODE) != CURLUE_OK)
        return false;
    size_t n = strlen(h);
    bool ok = n > 0 && n < hostsz;
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        ok = c > ' ' && c < 0x7F; /* punycode leaves nothing else */
        host[i] = (char)tolower(c);
    }
    if (ok)
        host[n] = '\0';
    curl_free(h);
    return ok;
}

/* An address literal: "[v6]" or dotted IPv4 (libcurl's parser already turned other IPv4
 * spellings such as 2130706433 into dotted form). libcurl connects to it directly. */
static bool host_is_literal(const char *host)
{
    struct in_addr a;
    return host[0] == '[' || inet_pton(AF_INET, host, &a) == 1;
}

/* The address the resolver should be asked about: without the brackets of a v6 literal. */
static void bare_host(const char *host, char *out, size_t outsz)
{
    size_t n = strlen(host);
    if (host[0] == '[' && n >= 2 && host[n - 1] == ']')
        snprintf(out, outsz, "%.*s", (int)(n - 2), host + 1);
    else
        snprintf(out, outsz, "%s", host);
}

static char *resolve_entry(const char *host, const char *port, const netcheck_result *checked)
{
    buf b;
    buf_init(&b, 128);
    buf_printf(&b, "%s:%s:", host, port);
    for (int i = 0; i < checked->count; i++) {
        if (i > 0)
            buf_putc(&b, ',');
        if (checked->families[i] == AF_INET6)
            buf_printf(&b, "[%s]", checked->addrs[i]);
        else
            buf_puts(&b, checked->addrs[i]);
    }
    return b.data; /* handed over to the caller, who frees it */
}

/* Parses url and replaces its host by the normalised one; fills t->host and t->port. */
static bool parse_url(const char *url, target *t, char *err, size_t errlen)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *port = NULL;
    if (u == NULL)
        mem_exhausted();
    bool parsed = curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
                  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
                  url_host(u, t->host, sizeof t->host);
    bool https = parsed && strcmp(scheme, "https") == 0;
    bool ok = https && curl_url_set(u, CURLUPART_HOST, t->host, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
              strlen(port) < sizeof t->port &&
              curl_url_get(u, CURLUPART_URL, &t->url, 0) == CURLUE_OK;
    if (ok)
        snprintf(t->port, sizeof t->port, "%s", port);
    else
        snprintf(err, errlen, "%s", parsed && !https ? "URL is not https" : "invalid URL");
    curl_free(port);
    curl_free(scheme);
    curl_url_cleanup(u);
    return ok;
}

bool target_parse(const char *url, target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (!parse_url(url, t, err, errlen)) {
        target_free(t);
        return false;
    }
    t->literal = host_is_literal(t->host);
    return true;
}

/* The reason a checked host is refused, as the delivery's attempt records it. */
static bool refuse(netcheck_status st, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s",
             st == NETCHECK_FORBIDDEN ? "host is or resolves to a non-public address"
                                      : "host does not resolve");
    return false;
}

bool target_check_literal(target *t, bool allow_private, char *err, size_t errlen)
{
    char bare[TARGET_HOST_MAX];
    bare_host(t->host, bare, sizeof bare);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bare, &in->sin_addr) == 1)
        in->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, bare, &in6->sin6_addr) == 1)
        in6->sin6_family = AF_INET6;
    else
        return refuse(NETCHECK_UNRESOLVED, err, errlen);
    const struct sockaddr *addrs[1] = {(const struct sockaddr *)&ss};
    netcheck_result checked;
    netcheck_status st = netcheck_addrs(addrs, 1, allow_private, &checked);
    return st == NETCHECK_OK || refuse(st, err, errlen);
}

bool target_pin(target *t, const struct sockaddr *const *addrs, size_t n, bool allow_private,
                char *err, size_t errlen)
{
    netcheck_result checked;
    netcheck_status st = netcheck_addrs(addrs, n, allow_private, &checked);
    if (st != NETCHECK_OK)
        return refuse(st, err, errlen);
    free(t->resolve);
    t->resolve = resolve_entry(t->host, t->port, &checked);
    return true;
}

void target_free(target *t)
{
    curl_free(t->url); /* t->url came from libcurl */
    free(t->resolve);
    t->url = NULL;
    t->resolve = NULL;
}
