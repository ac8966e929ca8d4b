/* target: where a delivery may connect, decided apart from the drainer so that the
 * server-side request forgery rules (one URL parser, every address checked, the pin) are
 * unit tested without a network or a resolver.
 *
 * One parser: the stored URL is read by lib/url.c's url_parse, which market-api accepted
 * it with, and libcurl is given url_parse's parts, not the URL text: a CURLU handle whose
 * scheme, host and port are set one by one (CURLOPT_CURLU), and the path and query as the
 * request target (CURLOPT_REQUEST_TARGET). libcurl takes the host and port it connects to
 * from the handle's parts and parses no URL string of its own, so it cannot connect to
 * another host or port than the ones checked here, whatever its parser would make of a
 * spelling (numeric host names, userinfo, backslashes, IDN). Handing it the normalised
 * text instead would rest on url_parse and libcurl's parser agreeing on every accepted
 * URL (tests/fuzz/fuzz_url.c checks that they do); the handle does not need them to. The
 * path and query go as the request target, not as parts of the handle, because libcurl's
 * part setter rewrites them (lower-case %xx escapes); the target is sent byte for byte,
 * as the subscription shows the URL. */
#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "mem.h"
#include "netcheck.h"

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

/* Sets one part of u; false when libcurl refuses it (it aborts when out of memory). */
static bool set_part(CURLU *u, CURLUPart what, const char *text)
{
    CURLUcode rc = curl_url_set(u, what, text, 0);
    if (rc == CURLUE_OUT_OF_MEMORY)
        mem_exhausted();
    return rc == CURLUE_OK;
}

/* Where libcurl connects, from the parts url_parse found (see the top of the file): NULL
 * if libcurl refuses one of them, which url_parse's rules should rule out. port: NULL for
 * the scheme's. */
static CURLU *request_url(const char *host, const char *port)
{
    CURLU *u = curl_url();
    if (u == NULL)
        mem_exhausted();
    if (!set_part(u, CURLUPART_SCHEME, "https") || !set_part(u, CURLUPART_HOST, host) ||
        (port != NULL && !set_part(u, CURLUPART_PORT, port))) {
        curl_url_cleanup(u);
        return NULL;
    }
    return u;
}

/* What libcurl asks for: the path and query byte for byte, "/" when the path is empty. */
static char *request_target_of(const url_parts *p)
{
    const char *tail = p->text + p->path;
    size_t n = p->len - p->path;
    char *out = xmalloc(n + 2);
    size_t slash = tail[0] == '/' ? 0 : 1;
    out[0] = '/';
    memcpy(out + slash, tail, n);
    out[slash + n] = '\0';
    return out;
}

bool target_parse(const char *url, target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    url_parts *p = xmalloc(sizeof *p); /* 2 kB: not on the drainer's stack */
    url_status st = url_parse(url, strlen(url), p);
    if (st == URL_OK) {
        t->literal = p->host_kind != URL_HOST_NAME;
        if (p->host_kind == URL_HOST_IPV6)
            snprintf(t->host, sizeof t->host, "[%s]", p->host);
        else
            snprintf(t->host, sizeof t->host, "%s", p->host);
        if (t->literal) /* an address: at most 45 bytes */
            snprintf(t->address, sizeof t->address, "%.*s", (int)sizeof t->address - 1, p->host);
        unsigned short port = (unsigned short)(p->port != 0 ? p->port : 443); /* 1..65535 */
        snprintf(t->port, sizeof t->port, "%hu", port);
        t->url = request_url(t->host, p->port != 0 ? t->port : NULL);
        if (t->url != NULL)
            t->request_target = request_target_of(p);
    }
    free(p);
    if (t->url == NULL) {
        snprintf(err, errlen, "%s", st == URL_NOT_HTTPS ? "URL is not https" : "invalid URL");
        return false;
    }
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
    if (!t->literal) /* a name is checked by target_pin, after its lookup */
        return refuse(NETCHECK_UNRESOLVED, err, errlen);
    netcheck_result checked;
    netcheck_status st = netcheck_numeric_host(t->address, allow_private, &checked);
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
    curl_url_cleanup(t->url);
    free(t->request_target);
    free(t->resolve);
    t->url = NULL;
    t->request_target = NULL;
    t->resolve = NULL;
}
