/* target: where one delivery may go, decided at the moment it is sent.
 *
 * The URL is parsed with libcurl's own parser, so that the host checked here is the host
 * libcurl connects to. The host is resolved and checked with lib/netcheck (again at every
 * attempt, since DNS answers change), and the addresses checked are pinned with
 * CURLOPT_RESOLVE so that libcurl does not resolve the name a second time and connect
 * somewhere else (DNS rebinding). */
#ifndef MARKET_WEBHOOKD_TARGET_H
#define MARKET_WEBHOOKD_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#define TARGET_HOST_MAX 256

typedef struct {
    char *url;     /* the URL to request, host normalised (lower case, IDN as punycode) */
    char *resolve; /* CURLOPT_RESOLVE entry "host:port:addr[,addr...]", NULL for a literal */
    char host[TARGET_HOST_MAX]; /* for log lines: never the whole URL (it may hold tokens) */
} target;

/* False, with a short reason in err, when the URL is not an absolute https URL with a
 * host, or its host does not resolve or resolves to a non-public address (unless
 * allow_private). */
bool target_prepare(const char *url, bool allow_private, target *t, char *err, size_t errlen);
void target_free(target *t);

#endif
