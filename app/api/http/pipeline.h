/* pipeline: the one order of checks every request goes through, whatever its route.
 *
 * docs/contract.md section 2 fixes the order in which a request is refused: the key (401),
 * its rate and its share of the host's workers (429), the route (404, 405), the scope
 * (403), the route's inputs (400, 413, 415), and only then the handler. pipeline_run holds
 * that order once, for every kind of route. A catalogue route differs in one property
 * only: its inputs are read and its page planned while the key is being checked, so that
 * the page can travel to PostgreSQL with the key's statement (serve.h); its refusals are
 * still answered in the contract's order, since a later answer replaces an earlier one.
 *
 * The steps are passed in (main.c gives the real ones) so that a unit test can run the
 * order with steps of its own and see which ran. */
#ifndef MARKET_PIPELINE_H
#define MARKET_PIPELINE_H

#include "auth.h"
#include "request.h"
#include "route.h"
#include "serve.h"

typedef struct {
    /* Finds r's route (routes.h); answers nothing. */
    route_fault (*find)(request *r);
    /* The key's first half: the header's form (401), the key's mode and in-flight share. */
    bool (*key_begin)(request *r, auth_query *q);
    /* A catalogue route's inputs and page, planned once the key's mode is known (serve.h). */
    void (*plan_page)(request *r, serve_page *page);
    /* The key's second half: its row and rate (401, 429), with the page when there is one. */
    bool (*key_finish)(request *r, auth_query *q, serve_page *page);
    /* The route's scope (403). */
    bool (*require_scope)(request *r, const char *scope);
    /* The route's declared inputs (400, 413, 415). */
    bool (*read_input)(request *r);
    /* A catalogue route's answer from its page (serve.h). */
    void (*answer_page)(request *r, serve_page *page);
} pipeline_steps;

/* Answers r: every check in the contract's order, then the route's handler. */
void pipeline_run(request *r, const pipeline_steps *steps);

#endif
