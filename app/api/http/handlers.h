/* handlers: one function per route, each in its own file, declared in the route table
 * (routes.c). A handler runs after the key, the rate limit, the route, the scope and the
 * route's declared inputs were checked and converted into r->in (pipeline.c); it checks
 * what only it can (a row a path parameter names, cursors, rules that tie two inputs
 * together) and writes the whole response (success or error) into the request. */
#ifndef MARKET_HANDLERS_H
#define MARKET_HANDLERS_H

#include "request.h"

/* The catalogue routes read one statement each and nothing else, so that statement can
 * travel to PostgreSQL with the key check in one round trip, and a repeat can be answered
 * from the worker's page cache (serve.c). Their work is split in two: plan checks the
 * input and names the statement and its parameters, or answers 400/404 itself and
 * returns false (an answer the key's 401 or 429 and the scope's 403 replace: pipeline.c);
 * render writes the answer from the statement's result. Both run with r->caller.mode
 * known. */
#define READ_MAX_PARAMS 12

typedef struct {
    db_stmt *stmt;
    const char *params[READ_MAX_PARAMS];
    void *input; /* the route's parsed input, from the request's arena */
} catalogue_read;

bool products_list_plan(request *r, catalogue_read *read); /* products_list.c */
extern const char *const products_sorts[];                 /* the values of sort, NULL-terminated */
void products_list_render(request *r, const catalogue_read *read, db_result *res);
bool product_get_plan(request *r, catalogue_read *read); /* product_get.c */
void product_get_render(request *r, const catalogue_read *read, db_result *res);
bool seller_get_plan(request *r, catalogue_read *read); /* seller_get.c */
void seller_get_render(request *r, const catalogue_read *read, db_result *res);

void handle_orders_list(request *r);                /* orders_list.c */
extern const char *const orders_statuses[];         /* the values of its status, NULL-terminated */
void handle_download_link(request *r);              /* download_link.c */
void handle_subscriptions_list(request *r);         /* subscriptions_list.c */
void handle_subscription_create(request *r);        /* subscription_create.c */
void handle_subscription_get(request *r);           /* subscription_get.c */
void handle_subscription_update(request *r);        /* subscription_update.c */
void handle_subscription_delete(request *r);        /* subscription_delete.c */
void handle_subscription_rotate_secret(request *r); /* subscription_rotate_secret.c */
void handle_subscription_test(request *r);          /* subscription_test.c */
void handle_events_list(request *r);                /* events_list.c */
extern const char *const event_types[];             /* the values of its type, NULL-terminated */
void handle_events_get(request *r);                 /* events_get.c */
void handle_file(request *r);                       /* file.c: the download location, no API key */
void handle_healthz(request *r);                    /* ops.c: the operational routes, no API key */
void handle_metrics(request *r);

#endif
