/* subscription: the check of a url's host and the JSON object of a subscription (see
 * subscription.h). The fields are declared in the route table (routes.c):
 *   url          a strict absolute https URL (lib/url.h), normalised (scheme and host
 *                lower-cased); http is url_not_https, anything else malformed is
 *                parameter_invalid. Its host must be, or resolve only to, public
 *                addresses (lib/netcheck.h) unless MARKET_WEBHOOK_ALLOW_PRIVATE=1; a host
 *                that does not resolve is refused the same way (url_not_allowed): the
 *                URL is well-formed, the service just will not send there.
 *   events       a non-empty array of known kinds, duplicates dropped, kept and answered
 *                in the canonical order.
 *   description  a string of at most 500 characters (code points), no control characters.
 *   disabled     a boolean (updates only). */
#include "subscription.h"

#include <string.h>

#include "crypto.h"
#include "db_array.h"
#include "netcheck.h"
#include "resolve.h"
#include "text.h"

/* How long the URL's host may take to resolve (the drainer checks it again at every
 * delivery, with its own deadline). */
#define DNS_DEADLINE_MS 2000
#define SECRET_BYTES 32

const char *const subscription_kinds[SUBSCRIPTION_KINDS + 1] = {
    "sale.completed", "sale.refunded", "review.created", "payout.sent", NULL};

/* The server-side request forgery check of netcheck.h, on the host as the URL names it,
 * resolved within DNS_DEADLINE_MS (lib/resolve.h): a name whose DNS answers slowly, or
 * never, holds this worker no longer than that. */
bool subscription_check_host(request *r)
{
    if (r->in.url == NULL)
        return true;
    netcheck_result res;
    netcheck_status status;
    switch (resolve_host(r->in.url->host, DNS_DEADLINE_MS, NULL, r->w->cfg.webhook_allow_private,
                         &status, &res)) {
    case RESOLVER_OK:
        break;
    case RESOLVER_FAILED:
        return respond_invalid(r, "url_not_allowed", "url", "the host of url does not resolve");
    case RESOLVER_TIMED_OUT:
        return respond_invalid(r, "url_not_allowed", "url",
                               "the host of url did not resolve within %d ms", DNS_DEADLINE_MS);
    }
    switch (status) {
    case NETCHECK_OK:
        return true;
    case NETCHECK_UNRESOLVED:
        return respond_invalid(r, "url_not_allowed", "url", "the host of url does not resolve");
    case NETCHECK_FORBIDDEN:
        break;
    }
    return respond_invalid(r, "url_not_allowed", "url",
                           "the host of url is or resolves to a private, loopback, link-local "
                           "or otherwise non-public address");
}

const char *subscription_events_literal(request *r, unsigned events)
{
    buf *literal = request_buf(r, 128);
    for (int k = 0; k < SUBSCRIPTION_KINDS; k++) {
        if (events & (1u << k))
            db_array_append(literal, subscription_kinds[k]);
    }
    db_array_end(literal);
    return literal->data;
}

void subscription_write(json_writer *j, const db_result *res, int row, int first,
                        const char *secret)
{
    jw_object_begin(j);
    jw_kv_string(j, "id", db_text(res, row, first));
    jw_kv_string(j, "object", "webhook_subscription");
    jw_kv_string(j, "url", db_text(res, row, first + 1));
    jw_key(j, "events");
    jw_array_begin(j);
    /* The kinds as stored, canonical order, joined by commas (no kind holds one). */
    const char *kinds = db_text(res, row, first + 2);
    while (*kinds != '\0') {
        size_t n = strcspn(kinds, ",");
        jw_string_n(j, kinds, n);
        kinds += n + (kinds[n] == ',');
    }
    jw_array_end(j);
    jw_kv_string(j, "description", db_text(res, row, first + 3));
    jw_kv_string(j, "status", db_text(res, row, first + 4));
    jw_kv_bool(j, "livemode", strcmp(db_text(res, row, first + 5), "live") == 0);
    if (secret != NULL)
        jw_kv_string(j, "secret", secret);
    jw_kv_string(j, "created_at", db_text(res, row, first + 6));
    jw_kv_string(j, "updated_at", db_text(res, row, first + 7));
    jw_object_end(j);
}

bool subscription_found(request *r, const db_result *res)
{
    if (res == NULL)
        return false;
    if (db_rows(res) == 0)
        return respond_missing(r, "webhook subscription");
    return true;
}

void subscription_respond(request *r, const db_result *res)
{
    if (!subscription_found(r, res))
        return;
    respond_json(r, 200);
    subscription_write(&r->json, res, 0, 0, NULL);
}

const char *subscription_new_secret(request *r, buf *sealed)
{
    uint8_t raw[SECRET_BYTES];
    crypto_random(raw, sizeof raw);
    buf *text = request_buf(r, 64);
    buf_puts(text, "whsec_");
    base64_encode(text, raw, sizeof raw);
    crypto_seal(r->w->secret_key, text->data, text->len, sealed);
    explicit_bzero(raw, sizeof raw);
    return text->data;
}
