/* webhook_sign: Standard Webhooks signatures (https://www.standardwebhooks.com).
 *
 * A delivery carries webhook-id, webhook-timestamp and webhook-signature; the signature
 * is "v1," + base64(HMAC-SHA256(key, id "." timestamp "." body)) where key is the
 * base64-decoded part of the subscription secret after "whsec_". Pure functions: the
 * drainer signs with them, the tests verify with them. */
#ifndef MARKET_WEBHOOK_SIGN_H
#define MARKET_WEBHOOK_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define WEBHOOK_SECRET_PREFIX "whsec_"
#define WEBHOOK_KEY_MIN 16 /* bytes; secrets issued by the API hold 32 */
#define WEBHOOK_KEY_MAX 64

/* Decodes a secret ("whsec_" + base64; the prefix may be absent, as the Standard
 * Webhooks libraries allow) into its raw key. False when the base64 is malformed or the
 * key is shorter than WEBHOOK_KEY_MIN or longer than WEBHOOK_KEY_MAX bytes. */
bool webhook_secret_key(const char *secret, uint8_t key[WEBHOOK_KEY_MAX], size_t *keylen);

/* Appends the signature "v1,<base64>" of (id, timestamp, body) to out. */
void webhook_sign(const uint8_t *key, size_t keylen, const char *id, long long timestamp,
                  const char *body, size_t bodylen, buf *out);

typedef enum {
    WEBHOOK_VERIFY_OK,
    WEBHOOK_VERIFY_BAD_SECRET,    /* the secret does not decode */
    WEBHOOK_VERIFY_BAD_TIMESTAMP, /* not a plain decimal number of seconds */
    WEBHOOK_VERIFY_STALE,         /* more than tolerance seconds away from now */
    WEBHOOK_VERIFY_MISMATCH,      /* no v1 signature in the header matches */
} webhook_verify_result;

/* Verifies a webhook-signature header, a space-separated list of "version,signature"
 * entries of which one matching "v1" entry suffices (that is how a sender rotates
 * secrets). Signatures are compared in constant time. */
webhook_verify_result webhook_verify(const char *secret, const char *id, const char *timestamp,
                                     const char *body, size_t bodylen, const char *header,
                                     long long now, long long tolerance);

#endif
