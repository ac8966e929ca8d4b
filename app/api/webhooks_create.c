/* POST /v1/webhooks: subscribes an HTTPS endpoint to events (docs/contract.md sections 6 and 7).
 *
 * Body {"url", "events", "description"}:
 *   url          required; a strict absolute https URL (lib/url.h), normalised (scheme and
 *                host lower-cased); http is url_not_https, anything else malformed is
 *                parameter_invalid. Its host must be, or resolve only to, public
 *                addresses (lib/netcheck.h) unless MARKET_WEBHOOK_ALLOW_PRIVATE=1; a host
 *                that does not resolve is refused the same way (url_not_allowed): the
 *                URL is well-formed, the service just will not send there.
 *   events       optional, default all four kinds; a non-empty array of known kinds,
 *                duplicates dropped, answered in the canonical order.
 *   description  optional string of at most 500 characters (code points), default "".
 *
 * Every input check, DNS included, runs before idem_begin, so input errors are never
 * stored under an Idempotency-Key. The subscription limit is state, not input: it is
 * checked inside the transaction and its 400 is stored like any other answer.
 *
 * The secret is "whsec_" + base64(32 random bytes). The subscription keeps it only sealed
 * with the server's webhook-secret key (market-webhookd opens it with the same
 * derivation, "market webhook secret v1" in main.c) and it is shown only in the 201 and
 * its idempotent replay. Because of that replay, a request with an Idempotency-Key leaves
 * the 201 body, secret included, in idempotency_keys for the key's 24-hour window. */
#include <stdio.h>
#include <string.h>

#include "db_array.h"
#include "handlers.h"
#include "idempotency.h"
#include "links.h"
#include "routes.h"
#include "netcheck.h"
#include "resolve.h"
#include "text.h"
#include "url.h"

/* How long the URL's host may take to resolve (the drainer checks it again at every
 * delivery, with its own deadline). */
#define DNS_DEADLINE_MS 2000

#define SUBSCRIPTIONS_MAX 16 /* enabled subscriptions per account and mode */
#define DESCRIPTION_MAX 500  /* characters */
#define SECRET_BYTES 32
#define ID_RANDOM_LEN 24

/* The kinds in their canonical order: the default, and the order of every answer. */
static const char *const event_kinds[] = {"sale.completed", "sale.refunded", "review.created",
                                          "payout.sent"};
#define KIND_COUNT (sizeof event_kinds / sizeof event_kinds[0])

typedef struct {
    url_parts url;
    bool wanted[KIND_COUNT];
    const char *description;
} subscription_input;

/* Serialises creations per account (both modes): the count below then sees every
 * subscription committed before it. NO KEY UPDATE, unlike UPDATE, does not block the
 * foreign-key checks of rows that reference the account (orders, keys, ...). */
DB_STMT(webhook_lock_account, "SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE", 1);

/* A statement of its own after the lock, so that its snapshot is taken after the wait
 * (in READ COMMITTED each statement sees what committed before it started). */
DB_STMT(webhook_insert,
        "INSERT INTO webhook_subscriptions"
        "       (id, account_id, mode, url, events, description, secret_sealed)"
        " SELECT $1, $2, $3, $4, $5::text[], $6, $7"
        "  WHERE (SELECT count(*) FROM webhook_subscriptions"
        "          WHERE account_id = $2 AND mode = $3 AND status = 'enabled') < $8::integer"
        " RETURNING " SQL_UTC_TEXT("created_at"),
        8);

static bool parse_url_field(request *r, json_object *body, subscription_input *in)
{
    json_object *v;
    if (body == NULL || !json_object_object_get_ex(body, "url", &v))
        return respond_invalid(r, "parameter_missing", "url", "url is required");
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
    for (size_t k = 0; k < KIND_COUNT; k++) {
        if ((size_t)json_object_get_string_len(v) == strlen(event_kinds[k]) &&
            strcmp(s, event_kinds[k]) == 0)
            return (int)k;
    }
    return -1;
}

static bool parse_events(request *r, json_object *body, subscription_input *in)
{
    json_object *v;
    if (body == NULL || !json_object_object_get_ex(body, "events", &v)) {
        for (size_t k = 0; k < KIND_COUNT; k++)
            in->wanted[k] = true;
        return true;
    }
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

static bool parse_description(request *r, json_object *body, subscription_input *in)
{
    json_object *v;
    in->description = "";
    if (body == NULL || !json_object_object_get_ex(body, "description", &v))
        return true;
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

/* The events as a PostgreSQL array literal, for $5::text[]. */
static const char *events_literal(request *r, const subscription_input *in)
{
    buf *events = request_buf(r, 128);
    for (size_t k = 0; k < KIND_COUNT; k++) {
        if (in->wanted[k])
            db_array_append(events, event_kinds[k]);
    }
    db_array_end(events);
    return events->data;
}

/* A fresh secret: "whsec_" + base64 of 32 random bytes, in the request's arena (the
 * response carries it), and its sealed form for the database. */
static const char *new_secret(request *r, buf *sealed)
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

static void respond_created(request *r, const char *id, const subscription_input *in,
                            const char *secret, const char *created_at)
{
    respond_json(r, 201);
    json_writer *j = &r->json;
    jw_object_begin(j);
    jw_kv_string(j, "id", id);
    jw_kv_string(j, "object", "webhook_subscription");
    jw_kv_string(j, "url", in->url.text);
    jw_key(j, "events");
    jw_array_begin(j);
    for (size_t k = 0; k < KIND_COUNT; k++) {
        if (in->wanted[k])
            jw_string(j, event_kinds[k]);
    }
    jw_array_end(j);
    jw_kv_string(j, "description", in->description);
    jw_kv_string(j, "status", "enabled");
    jw_kv_bool(j, "livemode", strcmp(r->caller.mode, "live") == 0);
    jw_kv_string(j, "secret", secret);
    jw_kv_string(j, "created_at", created_at);
    jw_object_end(j);
}

/* Locks the account, then inserts unless the limit is reached; answers 201 or 400 (or
 * 5xx from request_query). Runs inside a transaction. */
static void insert_subscription(request *r, const subscription_input *in)
{
    const char *lock_params[] = {r->caller.account_id};
    PGresult *res = request_query(r, &webhook_lock_account, lock_params);
    if (res == NULL)
        return;
    if (PQntuples(res) != 1) { /* the key's account vanished under it */
        respond_internal(r);
        return;
    }
    char id[4 + ID_RANDOM_LEN] = "we_";
    crypto_random_alnum(id + 3, ID_RANDOM_LEN);
    const char *events = events_literal(r, in);
    char limit[8];
    snprintf(limit, sizeof limit, "%d", SUBSCRIPTIONS_MAX);
    buf *sealed = request_buf(r, 128);
    const char *secret = new_secret(r, sealed);
    const char *params[] = {id,     r->caller.account_id, r->caller.mode, in->url.text,
                            events, in->description,      sealed->data,   limit};
    res = request_query(r, &webhook_insert, params);
    if (res == NULL)
        return;
    if (PQntuples(res) == 0) {
        respond_invalid(r, "subscription_limit_reached", NULL,
                        "an account may have at most %d webhook subscriptions in each mode",
                        SUBSCRIPTIONS_MAX);
        return;
    }
    respond_created(r, id, in, secret, db_text(res, 0, 0));
}

/* Without an Idempotency-Key there is no transaction yet: the lock needs one. */
static void create(request *r, const subscription_input *in, bool in_transaction)
{
    if (in_transaction) {
        insert_subscription(r, in);
        return;
    }
    if (!db_begin(r->w->db, DB_READ_COMMITTED)) {
        respond_unavailable(r);
        return;
    }
    insert_subscription(r, in);
    if (r->status >= 500)
        db_rollback(r->w->db);
    else if (!db_commit(r->w->db))
        respond_unavailable(r);
}

void handle_webhooks_create(request *r)
{
    static const char *const fields[] = {"url", "events", "description", NULL};
    json_object *body;
    subscription_input in;
    memset(in.wanted, 0, sizeof in.wanted);
    if (!request_json_body(r, fields, &body) || !parse_url_field(r, body, &in) ||
        !parse_events(r, body, &in) || !parse_description(r, body, &in) || !check_host(r, &in))
        return;

    idem_state st;
    if (!idem_begin(r, routes_label(r), &st))
        return;
    if (idem_guard(r, &st))
        create(r, &in, st.active);
    idem_finish(r, &st);
}
