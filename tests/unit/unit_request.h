/* unit_request: a request made in memory for the tests of market-api's steps (auth,
 * idempotency): its arena, its body and headers buffers and a zeroed worker, so that a
 * step can answer it without FastCGI and the test can read the answer. */
#ifndef MARKET_UNIT_REQUEST_H
#define MARKET_UNIT_REQUEST_H

#include "api/http/request.h"

typedef struct {
    arena a;
    buf body, headers; /* the answer's body and headers, as the step wrote them */
    worker w;
    request r;
} unit_request;

/* A fresh request (request_id "req_test", nothing else set) and its storage. */
void unit_request_open(unit_request *t);
void unit_request_close(unit_request *t);

#endif
