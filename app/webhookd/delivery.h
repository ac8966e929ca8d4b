/* delivery: one claimed webhook delivery and the outcome of one attempt to send it. */
#ifndef MARKET_WEBHOOKD_DELIVERY_H
#define MARKET_WEBHOOKD_DELIVERY_H

#include <stdbool.h>

typedef struct {
    long long id;          /* webhook_deliveries.id */
    char *event_id;        /* evt_..., the webhook-id header */
    char *subscription_id; /* we_... */
    int attempt;           /* 1 for the first attempt; counted when claimed */
    bool enabled;          /* the subscription is still enabled */
    char *url;
    char *secret_sealed; /* the whsec_ secret, sealed with the server secret */
    /* The secret a rotation replaced, while it still signs (also sealed), or NULL. */
    char *previous_secret_sealed;
    char *body; /* the exact bytes to sign and send */
} delivery;

#define ATTEMPT_ERROR_MAX 256

typedef struct {
    double started_at; /* Unix time, seconds with fraction */
    long duration_ms;
    long http_status;              /* 0 when no response came */
    char error[ATTEMPT_ERROR_MAX]; /* "" when the receiver answered */
    bool ok;                       /* a 2xx answer within the timeout */
    bool final;                    /* never retry (the subscription was disabled) */
} attempt;

void delivery_free(delivery *d);

#endif
