/* Test helper (scratch tooling, not part of the product): seals a whsec_ secret the way
 * POST /v1/webhooks stores it, so that tests can insert subscriptions with plain SQL.
 *
 *   MARKET_SECRET_FILE=... seal_secret [whsec_...]
 *
 * Without an argument it makes a new secret. Prints the secret, a tab, and the sealed
 * text for webhook_subscriptions.secret_sealed. */
#include <stdio.h>

#include "buf.h"
#include "config.h"
#include "crypto.h"

int main(int argc, char **argv)
{
    market_config cfg;
    char err[256];
    if (!crypto_init() || !config_load(&cfg, CONFIG_NEED_SECRET, err, sizeof err)) {
        fprintf(stderr, "seal_secret: %s\n", err);
        return 1;
    }
    buf secret;
    buf_init(&secret, 64);
    if (argc > 1) {
        buf_puts(&secret, argv[1]);
    } else {
        uint8_t raw[32];
        crypto_random(raw, sizeof raw);
        buf_puts(&secret, "whsec_");
        base64_encode(&secret, raw, sizeof raw);
    }
    uint8_t key[SHA256_LEN];
    /* The same derivation as market-api and market-webhookd (their main.c). */
    crypto_derive(cfg.secret, cfg.secret_len, "market webhook secret v1", key);
    buf sealed;
    buf_init(&sealed, 128);
    crypto_seal(key, secret.data, secret.len, &sealed);
    printf("%s\t%s\n", secret.data, sealed.data);
    return 0;
}
