/* subscription: what the webhook subscription routes share (docs/contract.md sections 6
 * and 13): the fields of a body, validated, and the subscription object as JSON.
 *
 * POST /v1/webhooks (webhooks_create.c) and POST /v1/webhooks/:id (webhooks_update.c)
 * take the same fields under the same rules; an update takes only those it is given, and
 * `disabled` besides. */
#ifndef MARKET_SUBSCRIPTION_H
#define MARKET_SUBSCRIPTION_H

#include <json.h>
#include <stdbool.h>

#include "links.h" /* SQL_UTC_TEXT */
#include "request.h"
#include "url.h"

/* The kinds a subscription may ask for, in their canonical order (the default, and the
 * order of every answer). */
#define SUBSCRIPTION_KINDS 4
extern const char *const subscription_kinds[SUBSCRIPTION_KINDS];

typedef struct {
    bool has_url, has_events, has_description, has_disabled; /* given in the body */
    url_parts url;                   /* normalised (scheme and host lower-cased) */
    bool wanted[SUBSCRIPTION_KINDS]; /* by index in subscription_kinds */
    const char *description;         /* "" when not given */
    bool disabled;
} subscription_input;

/* Reads the fields present in body (NULL: none) into in: url (required when
 * url_required), events, description, and disabled (which only an update's field list
 * lets through request_json_body). Answers 400 and returns false on the first bad one.
 * A URL that is given has its host checked (resolved within 2 s, public addresses only
 * unless MARKET_WEBHOOK_ALLOW_PRIVATE=1): 400 url_not_allowed. */
bool subscription_read(request *r, json_object *body, bool url_required, subscription_input *in);

/* in's events as a PostgreSQL array literal, for a text[] parameter. */
const char *subscription_events_literal(request *r, const subscription_input *in);

/* The subscription id of the route's path (":id"), or NULL once answered: 400 for a
 * malformed parameter, 404 resource_missing for a value that cannot be a subscription's
 * id (every id of another shape names nothing the caller may see). */
const char *subscription_path_id(request *r);

/* The whole of a route that acts on one subscription and takes no body (DELETE, test):
 * the path's id, a body with any field refused like every unknown field (400
 * parameter_unknown; 415 when not JSON), then effect(r, id) under Idempotency-Key
 * (idempotency.h: a replay answers as the first request did). */
void subscription_act_without_body(request *r, void (*effect)(request *r, const char *id));

/* Whether a statement that returns the subscription's row or none found it; answers 404
 * resource_missing when it did not. res NULL: already answered (request_query failed). */
bool subscription_found(request *r, const PGresult *res);

/* The answer of a statement that returns the subscription's row (SUBSCRIPTION_COLUMNS
 * first) or none: 200 with the object, or 404 (subscription_found). */
void subscription_respond(request *r, const PGresult *res);

/* A fresh signing secret: "whsec_" + base64 of 32 random bytes, in the request's arena
 * (the answer shows it, once), and into sealed its form for the database (AES-256-GCM
 * under the server's webhook-secret key; market-webhookd opens it). */
const char *subscription_new_secret(request *r, buf *sealed);

/* The columns subscription_write reads, from webhook_subscriptions as s, in this order. */
#define SUBSCRIPTION_COLUMNS                                                                       \
    "s.id, s.url, array_to_string(s.events, ','), s.description, s.status, s.mode, " SQL_UTC_TEXT( \
        "s.created_at") ", " SQL_UTC_TEXT("s.updated_at")
#define SUBSCRIPTION_NCOLS 8

/* Writes the subscription object of row (columns first..first+7 as SUBSCRIPTION_COLUMNS):
 * {"id","object","url","events","description","status","livemode","created_at",
 * "updated_at"}, with "secret" after livemode when secret is not NULL (the answer of a
 * rotation: the one time a new secret is shown). */
void subscription_write(json_writer *j, const PGresult *res, int row, int first,
                        const char *secret);

#endif
