/* subscription: the fields of a webhook subscription, validated, and its JSON object (see
 * subscription.h).
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
#include "idempotency.h"
#include "ids.h"
#include "netcheck.h"
#include "resolve.h"
#include "text.h"

/* How long the URL's host may take to resolve (the drainer checks it again at every
 * delivery, with its own deadline). */
#define DNS_DEADLINE_MS 2000
#define DESCRIPTION_MAX 500 /* characters */
#define SECRET_BYTES 32

const char *const subscription_kinds[SUBSCRIPTION_KINDS] = {"sale.completed", "sale.refunded",
                                                            "review.created", "payout.sent"};

static bool parse_url(request *r, json_object *v, subscription_input *in)
{
    if (!json_object_is_type(v, json_type_string))
        return respond_invalid(r, "parameter_invalid", "url", "url must be a string");
    url_status st =
        url_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), &in->url);
    if (st == URL_NOT_HTTPS)
        return respond_invalid(r, "url_not_https", "url", "url must use https");
    if (st != URL_OK)
        return respond_invalid(r, "parameter_invalid", "url", "%s", in->url.error);
    return true;
}

static int kind_index(json_object *v)
{
    if (!json_object_is_type(v, json_type_string))
        return -1;
    const char *s = json_object_get_string(v);
    for (int k = 0; k < SUBSCRIPTION_KINDS; k++) {
        if ((size_t)json_object_get_string_len(v) == strlen(subscription_kinds[k]) &&
            strcmp(s, subscription_kinds[k]) == 0)
            return k;
    }
    return -1;
}

static bool parse_events(request *r, json_object *v, subscription_input *in)
{
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    if (n == 0)
        return respond_invalid(r, "parameter_invalid", "events",
                               "events must be a non-empty array of event kinds: "
                               "sale.completed, sale.refunded, review.created, payout.sent");
    for (size_t i = 0; i < n; i++) {
        int k = kind_index(json_object_array_get_idx(v, i));
        if (k < 0)
            return respond_invalid(r, "parameter_invalid", "events",
                                   "events[%zu] is not an event kind: use sale.completed, "
                                   "sale.refunded, review.created or payout.sent",
                                   i);
        in->wanted[k] = true;
    }
    return true;
}

static bool parse_description(request *r, json_object *v, subscription_input *in)
{
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    size_t len = s != NULL ? (size_t)json_object_get_string_len(v) : 0;
    /* utf8_valid also refuses NUL, which a JSON "\u0000" escape can smuggle in. */
    if (s == NULL || !utf8_valid(s, len) || utf8_length(s, len) > DESCRIPTION_MAX)
        return respond_invalid(r, "parameter_invalid", "description",
                               "description must be a string of at most %d characters",
                               DESCRIPTION_MAX);
    if (text_has_control(s, len))
        return respond_invalid(r, "parameter_invalid", "description",
                               "description must not contain control characters");
    in->description = s;
    return true;
}

static bool parse_disabled(request *r, json_object *v, subscription_input *in)
{
    if (!json_object_is_type(v, json_type_boolean))
        return respond_invalid(r, "parameter_invalid", "disabled",
                               "disabled must be true or false");
    in->disabled = json_object_get_boolean(v);
    return true;
}

/* The server-side request forgery check of netcheck.h, on the host as the URL names it,
 * resolved within DNS_DEADLINE_MS (lib/resolve.h): a name whose DNS answers slowly, or
 * never, holds this worker no longer than that. */
static bool check_host(request *r, const subscription_input *in)
{
    netcheck_result res;
    netcheck_status status;
    switch (resolve_host(in->url.host, DNS_DEADLINE_MS, NULL, r->w->cfg.webhook_allow_private,
                         &status, &res)) {
    case RESOLVE_OK:
        break;
    case RESOLVE_FAILED:
        return respond_invalid(r, "url_not_allowed", "url", "the host of url does not resolve");
    case RESOLVE_TIMED_OUT:
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

bool subscription_read(request *r, json_object *body, bool url_required, subscription_input *in)
{
    memset(in, 0, sizeof *in);
    in->description = "";
    json_object *v;
    in->has_url = body != NULL && json_object_object_get_ex(body, "url", &v);
    if (!in->has_url && url_required)
        return respond_invalid(r, "parameter_missing", "url", "url is required");
    if (in->has_url && !parse_url(r, v, in))
        return false;
    in->has_events = body != NULL && json_object_object_get_ex(body, "events", &v);
    if (in->has_events && !parse_events(r, v, in))
        return false;
    in->has_description = body != NULL && json_object_object_get_ex(body, "description", &v);
    if (in->has_description && !parse_description(r, v, in))
        return false;
    in->has_disabled = body != NULL && json_object_object_get_ex(body, "disabled", &v);
    if (in->has_disabled && !parse_disabled(r, v, in))
        return false;
    /* The host last: every other field is checked before a DNS lookup is paid for. */
    return !in->has_url || check_host(r, in);
}

const char *subscription_events_literal(request *r, const subscription_input *in)
{
    buf *events = request_buf(r, 128);
    for (int k = 0; k < SUBSCRIPTION_KINDS; k++) {
        if (in->wanted[k])
            db_array_append(events, subscription_kinds[k]);
    }
    db_array_end(events);
    return events->data;
}

void subscription_write(json_writer *j, const PGresult *res, int row, int first, const char *secret)
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

const char *subscription_path_id(request *r)
{
    const char *id = request_path_param(r, 255);
    if (id != NULL && !ids_prefixed_valid(id, "we_")) {
        respond_missing(r, "webhook subscription");
        return NULL;
    }
    return id;
}

void subscription_act_without_body(request *r, void (*effect)(request *r, const char *id))
{
    static const char *const no_fields[] = {NULL};
    const char *id = subscription_path_id(r);
    json_object *body;
    if (id == NULL || !request_json_body(r, no_fields, &body))
        return;
    idem_state st;
    if (!idem_begin(r, r->route_label, &st))
        return;
    if (idem_guard(r, &st))
        effect(r, id);
    idem_finish(r, &st);
}

bool subscription_found(request *r, const PGresult *res)
{
    if (res == NULL)
        return false;
    if (db_rows(res) == 0)
        return respond_missing(r, "webhook subscription");
    return true;
}

void subscription_respond(request *r, const PGresult *res)
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
