/* target: where one delivery may go, decided at the moment it is sent.
 *
 * The stored URL is parsed with lib/url.h, the parser market-api accepted it with, and
 * with no other. libcurl is handed the parts found there, not a URL string it would parse
 * by its own rules: a CURLU handle built part by part (CURLOPT_CURLU) and the request
 * target, so that the host and port checked here are the ones libcurl connects to. A URL
 * that url_parse refuses is never requested. An address literal is checked at once; a
 * name is resolved first (by resolver.h, without blocking the drainer) and every address
 * of the answer is checked with lib/netcheck, again at every attempt since DNS answers
 * change. The addresses checked are pinned with CURLOPT_RESOLVE so that libcurl does not
 * resolve the name a second time and connect somewhere else (DNS rebinding). */
#ifndef MARKET_WEBHOOKD_TARGET_H
#define MARKET_WEBHOOKD_TARGET_H

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "url.h"

#define TARGET_HOST_MAX (URL_HOST_MAX + 3) /* a name, or "[v6]", and the NUL */

typedef struct {
    /* Where libcurl connects (CURLOPT_CURLU): https, the checked host, the URL's port. */
    CURLU *url;
    /* What it asks for (CURLOPT_REQUEST_TARGET): the URL's path and query byte for byte,
     * "/" for an empty path. */
    char *request_target;
    /* CURLOPT_RESOLVE entry "host:port:addr[,addr...]", NULL for a literal. */
    char *resolve;
    /* Lower case, "[v6]" for IPv6 as libcurl has it; for the resolver and log lines: never
     * the whole URL (it may hold tokens). */
    char host[TARGET_HOST_MAX];
    char port[8];                   /* the URL's port, or the scheme's (443) */
    bool literal;                   /* host is an address: nothing to resolve */
    char address[INET6_ADDRSTRLEN]; /* a literal's address without brackets, else "" */
} target;

/* False, with a short reason in err, when url_parse refuses the URL: "URL is not https"
 * for an http URL, "invalid URL" for anything else. t->host is set whenever it parsed. */
bool target_parse(const char *url, target *t, char *err, size_t errlen);

/* For a parsed target whose host is a literal: false, with the reason in err, when the
 * address is not public (unless allow_private). */
bool target_check_literal(target *t, bool allow_private, char *err, size_t errlen);

/* For a parsed target whose host is a name: checks every address of the resolver's
 * answer (addrs[0..n)) and pins the first ones (t->resolve). False, with the reason in
 * err, when one is not public (unless allow_private) or none is IPv4 or IPv6. */
bool target_pin(target *t, const struct sockaddr *const *addrs, size_t n, bool allow_private,
                char *err, size_t errlen);

/* Frees what parse and pin allocated; t may be freed twice. */
void target_free(target *t);

#endif
