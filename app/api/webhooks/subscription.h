/* subscription: what the webhook subscription routes share (docs/contract.md sections 6
 * and 13): the check of a url's host, and the subscription object as JSON.
 *
 * POST /v1/webhooks (subscription_create.c) and POST /v1/webhooks/:id (subscription_update.c)
 * take the same fields under the same rules, declared in the route table (routes.c) and
 * read into r->in; an update takes only those it is given, and `disabled` besides. */
#ifndef MARKET_SUBSCRIPTION_H
#define MARKET_SUBSCRIPTION_H

#include <stdbool.h>

#include "links.h" /* SQL_UTC_TEXT */
#include "request.h"
#include "url.h"

/* The kinds a subscription may ask for, in their canonical order (the default, and the
 * order of every answer), NULL-terminated: the values of the field events (routes.c). */
#define SUBSCRIPTION_KINDS 4
extern const char *const subscription_kinds[SUBSCRIPTION_KINDS + 1];

/* The host of r->in.url, when one was given: it must be, or resolve only to, public
 * addresses (resolved within 2 s; any address with MARKET_WEBHOOK_ALLOW_PRIVATE=1); else
 * answers 400 url_not_allowed and returns false. The last check of a subscription's
 * fields: every other is made before a DNS lookup is paid for. */
bool subscription_check_host(request *r);

/* events (bit k: subscription_kinds[k]) as a PostgreSQL array literal, for a text[]
 * parameter. */
const char *subscription_events_literal(request *r, unsigned events);

/* Whether a statement that returns the subscription's row or none found it; answers 404
 * resource_missing when it did not. res NULL: already answered (request_query failed). */
bool subscription_found(request *r, const db_result *res);

/* The answer of a statement that returns the subscription's row (SUBSCRIPTION_COLUMNS
 * first) or none: 200 with the object, or 404 (subscription_found). */
void subscription_respond(request *r, const db_result *res);

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
void subscription_write(json_writer *j, const db_result *res, int row, int first,
                        const char *secret);

#endif
