/* delivery: releasing a claimed delivery, the one place that knows which of its members
 * own memory and which hold sealed secrets to wipe. store.c fills one; the drainer's job
 * holds it until its outcome is recorded. */
#include "delivery.h"

#include <stdlib.h>
#include <string.h>

void delivery_free(delivery *d)
{
    free(d->event_id);
    free(d->subscription_id);
    free(d->url);
    /* The sealed secrets are harmless without the server secret, but clear them anyway. */
    if (d->secret_sealed != NULL)
        explicit_bzero(d->secret_sealed, strlen(d->secret_sealed));
    free(d->secret_sealed);
    if (d->previous_secret_sealed != NULL)
        explicit_bzero(d->previous_secret_sealed, strlen(d->previous_secret_sealed));
    free(d->previous_secret_sealed);
    free(d->body);
    memset(d, 0, sizeof *d);
}
