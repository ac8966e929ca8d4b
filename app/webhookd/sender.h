/* sender: many HTTPS POSTs in flight at once on one libcurl multi handle.
 *
 * Requests occupy numbered slots. Each slot keeps its easy handle for the life of the
 * process, and the multi handle keeps finished connections open in its cache, so a
 * receiver that gets many events gets them over a few kept-alive connections (or one
 * HTTP/2 connection) instead of a TLS handshake each. */
#ifndef MARKET_WEBHOOKD_SENDER_H
#define MARKET_WEBHOOKD_SENDER_H

#include <curl/curl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

#include "delivery.h"

typedef struct sender sender;

typedef struct {
    /* Where to connect and what to ask for, as target.h made them (never a URL string for
     * libcurl to parse); url must stay valid until the request is done. */
    CURLU *url;                 /* CURLOPT_CURLU */
    const char *request_target; /* CURLOPT_REQUEST_TARGET: path and query */
    const char *resolve;        /* CURLOPT_RESOLVE entry, or NULL */
    const char *body;           /* must stay valid until the request is done */
    size_t body_len;
    const char *event_id;
    long long timestamp;
    const char *signature;
    /* The attempt began before the request (its host was resolved first): its record
     * counts from then, and the request may take what is left of the attempt's time. */
    double started_at;    /* wall clock, Unix seconds */
    long long started_ms; /* monotonic */
    long timeout_ms;      /* at least 1 */
} sender_request;

/* ca_file: a PEM file that replaces libcurl's default bundle, or NULL for the default. */
sender *sender_create(int slots, const char *ca_file);
void sender_destroy(sender *s);

/* Starts the request in a free slot; false (err set) if libcurl refuses it. */
bool sender_start(sender *s, int slot, const sender_request *req, char *err, size_t errlen);

/* Waits up to timeout_ms for network activity or one of the extra descriptors (POLLIN,
 * POLLOUT), whose revents it fills as poll() would, with what libcurl's wait reports:
 * POLLIN, POLLPRI and POLLOUT, never POLLERR or POLLHUP. */
void sender_wait(sender *s, struct pollfd *extra, unsigned nextra, int timeout_ms);

/* Moves transfers forward; then returns finished ones one by one: true and *slot and *out
 * filled, until false. */
void sender_perform(sender *s);
bool sender_next_done(sender *s, int *slot, attempt *out);

int sender_in_flight(const sender *s);

#endif
