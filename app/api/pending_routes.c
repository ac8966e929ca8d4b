/* Routes of later issues: absent (404) until their own handlers land. */
#include "handlers.h"

static void absent(request *r)
{
    respond_error(r, 404, "invalid_request_error", "route_not_found", NULL, "no such route");
}
void handle_webhooks_create(request *r) { absent(r); }
