/* target: where one delivery may go, decided at the moment it is sent.
 *
 * The URL is parsed with libcurl's own parser, so that the host checked here is the host
 * libcurl connects to. An address literal is checked at once; a name is resolved first
 * (by resolver.h, without blocking the drainer) and every address of the answer is
 * checked with lib/netcheck, again at every attempt since DNS answers change. The
 * addresses checked are pinned with CURLOPT_RESOLVE so that libcurl does not resolve the
 * name a second time and connect somewhere else (DNS rebinding). */
#ifndef MARKET_WEBHOOKD_TARGET_H
#define MARKET_WEBHOOKD_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define TARGET_HOST_MAX 256

typedef struct {
    char *url;     /* the URL to request, host normalised (lower case, IDN as punycode) */
    char *resolve; /* CURLOPT_RESOLVE entry "host:port:addr[,addr...]", NULL for a literal */
    char host[TARGET_HOST_MAX]; /* for log lines: never the whole URL (it may hold tokens) */
    char port[8];               /* the URL's port, or the scheme's (443) */
    bool literal;               /* host is an address: nothing to resolve */
} target;

/* False, with a short reason in err ("invalid URL", "URL is not https"), when the URL is
 * not an absolute https URL with a host. t->host is set whenever the URL parsed. */
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
