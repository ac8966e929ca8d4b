/* url: the only parser of receiver URLs, in market-api and in market-webhookd alike. What
 * it accepts decides where deliveries go, so it lives apart, pure, unit tested and fuzzed
 * (tests/fuzz/fuzz_url.c). */
#include "url.h"

#include <arpa/inet.h>
#include <string.h>

#define IPV6_TEXT_MAX 45 /* "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" */

/* ASCII only, whatever the locale (ctype.h would consult it). */
static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static url_status fail(url_parts *out, const char *why)
{
    out->error = why;
    return URL_INVALID;
}

/* RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ':'. Returns the
 * length of the scheme, or 0 when s does not start with one. */
static size_t scheme_length(const char *s, size_t n)
{
    if (n == 0 || !is_alpha(s[0]))
        return 0;
    size_t i = 1;
    while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    return i < n && s[i] == ':' ? i : 0;
}

static bool equals_nocase(const char *s, size_t n, const char *word)
{
    if (strlen(word) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (lower(s[i]) != word[i])
            return false;
    }
    return true;
}

/* Printable ASCII but space and backslash: what may appear anywhere in an accepted URL.
 * Checked over the whole input first, so that later steps can rely on it. */
static bool bytes_acceptable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7F || c == '\\')
            return false;
    }
    return true;
}

/* 1..5 decimal digits without a leading zero, 1..65535. */
static bool parse_port(const char *s, size_t n, unsigned *port)
{
    if (n == 0 || n > 5 || s[0] == '0')
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535)
        return false;
    *port = v;
    return true;
}

/* A label WHATWG's URL standard treats as a number ("ends in a number"): all digits, or
 * 0x / 0X and hex digits. Resolvers (inet_aton) read such hosts as IPv4 addresses. */
static bool label_numeric(const char *s, size_t n)
{
    size_t i = 0;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        for (i = 2; i < n; i++) {
            if (!is_hex(s[i]))
                return false;
        }
        return true;
    }
    for (i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
    }
    return n > 0;
}

/* Exactly four decimal parts 0..255 without leading zeros. */
static bool dotted_quad(const char *s, size_t n)
{
    int parts = 0;
    size_t i = 0;
    while (i <= n) {
        size_t start = i;
        unsigned v = 0;
        while (i < n && is_digit(s[i]) && i - start < 4)
            v = v * 10 + (unsigned)(s[i++] - '0');
        size_t len = i - start;
        if (len == 0 || len > 3 || v > 255 || (len > 1 && s[start] == '0'))
            return false;
        parts++;
        if (i == n)
            break;
        if (s[i] != '.' || parts == 4)
            return false;
        i++;
    }
    return parts == 4;
}

/* A DNS name (letters, digits, hyphens; see url.h) or a dotted quad. */
static bool name_or_ipv4(const char *s, size_t n, url_host_kind *kind)
{
    if (n == 0 || n > URL_HOST_MAX)
        return false;
    size_t last = 0; /* start of the last label */
    for (size_t start = 0; start <= n;) {
        size_t end = start;
        while (end < n && s[end] != '.') {
            if (!is_alpha(s[end]) && !is_digit(s[end]) && s[end] != '-')
                return false;
            end++;
        }
        size_t len = end - start;
        if (len == 0 || len > 63 || s[start] == '-' || s[end - 1] == '-')
            return false;
        last = start;
        start = end + 1;
    }
    if (label_numeric(s + last, n - last)) {
        *kind = URL_HOST_IPV4;
        return dotted_quad(s, n);
    }
    *kind = URL_HOST_NAME;
    return true;
}

/* The inside of "[...]": hex digits, ':' and '.' only (no zone "%25...", no IPvFuture
 * "v1.x"), and an address inet_pton accepts. */
static bool ipv6_literal(const char *s, size_t n, char *host)
{
    if (n == 0 || n > IPV6_TEXT_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_hex(s[i]) && s[i] != ':' && s[i] != '.')
            return false;
    }
    memcpy(host, s, n);
    host[n] = '\0';
    struct in6_addr a;
    return inet_pton(AF_INET6, host, &a) == 1;
}

/* The authority s[0..n): host and optional port, into out. */
static url_status parse_authority(const char *s, size_t n, url_parts *out)
{
    if (memchr(s, '@', n) != NULL)
        return fail(out, "url must not contain a user name or password");
    if (n == 0)
        return fail(out, "url must have a host");
    size_t host_len, rest;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (close == NULL)
            return fail(out, "url has an unterminated IPv6 address");
        host_len = (size_t)(close - s) - 1;
        rest = (size_t)(close - s) + 1;
        if (!ipv6_literal(s + 1, host_len, out->host))
            return fail(out, "url host is not a valid IPv6 address");
        out->host_kind = URL_HOST_IPV6;
    } else {
        const char *colon = memchr(s, ':', n);
        host_len = colon != NULL ? (size_t)(colon - s) : n;
        rest = host_len;
        if (host_len == 0)
            return fail(out, "url must have a host");
        if (!name_or_ipv4(s, host_len, &out->host_kind))
            return fail(out, "url host must be a DNS name of letters, digits and hyphens, "
                             "an IPv4 address or a bracketed IPv6 address");
        memcpy(out->host, s, host_len);
        out->host[host_len] = '\0';
    }
    for (size_t i = 0; i < host_len; i++)
        out->host[i] = lower(out->host[i]);
    out->port = 0;
    if (rest == n)
        return URL_OK;
    if (s[rest] != ':' || !parse_port(s + rest + 1, n - rest - 1, &out->port))
        return fail(out, "url port must be a number from 1 to 65535");
    return URL_OK;
}

/* RFC 3986 path and query characters: unreserved, sub-delims, ":", "@", "/", "?", and
 * "%" followed by two hex digits. */
static bool path_query_valid(const char *s, size_t n)
{
    static const char allowed[] = "-._~!$&'()*+,;=:@/?";
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (n - i < 3 || !is_hex(s[i + 1]) || !is_hex(s[i + 2]))
                return false;
            i += 2;
        } else if (!is_alpha(c) && !is_digit(c) && strchr(allowed, c) == NULL) {
            return false;
        }
    }
    return true;
}

url_status url_parse(const char *s, size_t n, url_parts *out)
{
    out->error = NULL;
    if (n == 0)
        return fail(out, "url must not be empty");
    if (n > URL_MAX)
        return fail(out, "url must be at most 2048 bytes");
    size_t scheme = scheme_length(s, n);
    if (scheme == 0)
        return fail(out, "url must be an absolute https:// URL");
    if (equals_nocase(s, scheme, "http")) {
        out->error = "url must use https";
        return URL_NOT_HTTPS;
    }
    if (!equals_nocase(s, scheme, "https"))
        return fail(out, "url must use https");
    if (n < 8 || s[6] != '/' || s[7] != '/')
        return fail(out, "url must be an absolute https:// URL");
    if (!bytes_acceptable(s, n))
        return fail(out, "url must not contain spaces, control characters, backslashes or "
                         "characters outside ASCII");

    const char *auth = s + 8;
    size_t auth_len = 0;
    while (8 + auth_len < n && auth[auth_len] != '/' && auth[auth_len] != '?' &&
           auth[auth_len] != '#')
        auth_len++;
    url_status st = parse_authority(auth, auth_len, out);
    if (st != URL_OK)
        return st;
    const char *tail = auth + auth_len;
    size_t tail_len = n - 8 - auth_len;
    if (memchr(tail, '#', tail_len) != NULL)
        return fail(out, "url must not have a fragment");
    if (!path_query_valid(tail, tail_len))
        return fail(out, "url path and query may only hold the characters RFC 3986 allows "
                         "there, and % only as %XX");

    /* Normalised: lower-case scheme and host, the rest as given. */
    memcpy(out->text, s, n);
    out->text[n] = '\0';
    for (size_t i = 0; i < 8 + auth_len; i++)
        out->text[i] = lower(out->text[i]);
    out->len = n;
    out->path = 8 + auth_len;
    return URL_OK;
}
