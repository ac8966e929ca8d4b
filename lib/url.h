/* url: the one parser of the receiver URLs of webhook subscriptions. market-api parses
 * with it what clients send to POST /v1/webhooks and POST /v1/webhooks/:id, and
 * market-webhookd parses the stored URL with it again at every delivery attempt
 * (app/webhookd/target.c), checks the host it found and hands libcurl those parts, never a
 * URL string to read on its own.
 *
 * Accepted: an absolute `https://` URL of at most URL_MAX bytes whose authority is a host
 * and an optional port, then an optional path and query:
 *
 *     https://host[:port][/path][?query]
 *
 * Strict on purpose: the URL is stored, shown back, and requested by market-webhookd
 * through libcurl, so anything that a resolver, a receiver or another URL parser might
 * read differently is refused rather than interpreted. Refused:
 *   - a scheme other than https (http is told apart: URL_NOT_HTTPS);
 *   - userinfo (`user:pass@`), a fragment (`#...`), an empty host, an empty port;
 *   - spaces, control characters, backslashes, bytes outside ASCII, and any character
 *     RFC 3986 does not allow in a path or query (`"<>[]^`{|}`); `%` must start `%XX`;
 *   - a host that is not a DNS name of letters, digits and hyphens (labels of 1..63, no
 *     leading or trailing hyphen, no empty label and so no trailing dot, at most 253
 *     bytes), a dotted-quad IPv4 address (four decimal parts 0..255 without leading zeros)
 *     or a bracketed IPv6 address (no zone identifier). A name whose last label is numeric
 *     (`127.1`, `1.2.3.4.5`, `0x7f.1`) must be a dotted quad: those are the spellings
 *     resolvers read as IPv4 addresses in surprising ways. Internationalised names must
 *     be given in their ASCII (`xn--`) form;
 *   - a port outside 1..65535 or with a leading zero.
 *
 * The normalised URL differs from the input only in case: the scheme and the host are
 * lower-cased (host names are case-insensitive), everything else is kept byte for byte.
 * Pure: no allocation, no I/O, no locale. */
#ifndef MARKET_URL_H
#define MARKET_URL_H

#include <stdbool.h>
#include <stddef.h>

#define URL_MAX 2048     /* bytes of the whole URL (docs/contract.md section 6) */
#define URL_HOST_MAX 253 /* bytes of a DNS name; an IPv6 literal is shorter */

typedef enum {
    URL_OK,
    URL_NOT_HTTPS, /* the scheme is http (any case): POST /v1/webhooks says url_not_https */
    URL_INVALID,   /* anything else that is not accepted; `error` says why */
} url_status;

typedef enum {
    URL_HOST_NAME, /* a DNS name, to be resolved */
    URL_HOST_IPV4, /* a dotted quad */
    URL_HOST_IPV6, /* an IPv6 address (given in brackets) */
} url_host_kind;

typedef struct {
    char text[URL_MAX + 1];      /* the normalised URL, NUL-terminated */
    size_t len;                  /* strlen(text), always the length of the input */
    char host[URL_HOST_MAX + 1]; /* lower-case; an IPv6 address without its brackets */
    url_host_kind host_kind;
    unsigned port;     /* the explicit port, or 0 when there is none (443 applies) */
    size_t path;       /* text[path..len): the path and query, what follows the authority */
    const char *error; /* on failure: a short reason for people, a static string */
} url_parts;

/* Parses s[0..n) (which need not be NUL-terminated and may contain NUL bytes, which are
 * refused). On URL_OK fills every field and error is NULL; otherwise only error (never
 * NULL) is meaningful. */
url_status url_parse(const char *s, size_t n, url_parts *out);

#endif
