/* unit_request: the one in-memory request the tests of market-api's steps share, so that
 * each test file does not wire a request to its storage again. */
#include "unit_request.h"

#include <string.h>

void unit_request_open(unit_request *t)
{
    memset(t, 0, sizeof *t);
    arena_init(&t->a, 4096);
    buf_init(&t->body, 1024);
    buf_init(&t->headers, 256);
    t->r.w = &t->w;
    t->r.arena = &t->a;
    t->r.body = &t->body;
    t->r.headers = &t->headers;
    t->r.request_id = "req_test";
}

void unit_request_close(unit_request *t)
{
    buf_free(&t->body);
    buf_free(&t->headers);
    arena_free(&t->a);
}
