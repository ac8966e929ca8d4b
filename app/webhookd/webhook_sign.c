/* webhook_sign: Standard Webhooks signing and verifying in one pure file, so that the
 * drainer's signatures and the tests' and fuzzers' checks of them follow one reading of
 * the specification. Keeping the secret is the caller's (sealed, lib/crypto). */
#include "webhook_sign.h"

#include <stdio.h>
#include <string.h>

#include "crypto.h"

#define SIG_VERSION "v1,"
#define TIMESTAMP_MAX_DIGITS 18 /* fits a long long with room to spare */

bool webhook_secret_key(const char *secret, uint8_t key[WEBHOOK_KEY_MAX], size_t *keylen)
{
    size_t plen = strlen(WEBHOOK_SECRET_PREFIX);
    if (strncmp(secret, WEBHOOK_SECRET_PREFIX, plen) == 0)
        secret += plen;
    size_t n = WEBHOOK_KEY_MAX;
    if (!base64_decode(secret, strlen(secret), key, &n) || n < WEBHOOK_KEY_MIN)
        return false;
    *keylen = n;
    return true;
}

/* HMAC-SHA256 over id "." timestamp "." body. */
static void signed_content_mac(const uint8_t *key, size_t keylen, const char *id,
                               const char *timestamp, const char *body, size_t bodylen,
                               uint8_t mac[SHA256_LEN])
{
    buf content;
    buf_init(&content, strlen(id) + strlen(timestamp) + bodylen + 2);
    buf_puts(&content, id);
    buf_putc(&content, '.');
    buf_puts(&content, timestamp);
    buf_putc(&content, '.');
    buf_append(&content, body, bodylen);
    crypto_hmac_sha256(key, keylen, content.data, content.len, mac);
    buf_free(&content);
}

void webhook_sign(const uint8_t *key, size_t keylen, const char *id, long long timestamp,
                  const char *body, size_t bodylen, buf *out)
{
    char ts[24];
    snprintf(ts, sizeof ts, "%lld", timestamp);
    uint8_t mac[SHA256_LEN];
    signed_content_mac(key, keylen, id, ts, body, bodylen, mac);
    buf_puts(out, SIG_VERSION);
    base64_encode(out, mac, sizeof mac);
}

static bool parse_timestamp(const char *text, long long *out)
{
    size_t n = strlen(text);
    if (n == 0 || n > TIMESTAMP_MAX_DIGITS)
        return false;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        v = v * 10 + (text[i] - '0');
    }
    *out = v;
    return true;
}

/* True when one entry "v1,<base64>" of length len decodes to expected. */
static bool entry_matches(const char *entry, size_t len, const uint8_t expected[SHA256_LEN])
{
    size_t vlen = strlen(SIG_VERSION);
    if (len <= vlen || strncmp(entry, SIG_VERSION, vlen) != 0)
        return false;
    uint8_t got[SHA256_LEN + 3];
    size_t gotlen = sizeof got;
    if (!base64_decode(entry + vlen, len - vlen, got, &gotlen) || gotlen != SHA256_LEN)
        return false;
    return crypto_equal(got, expected, SHA256_LEN);
}

webhook_verify_result webhook_verify(const char *secret, const char *id, const char *timestamp,
                                     const char *body, size_t bodylen, const char *header,
                                     long long now, long long tolerance)
{
    uint8_t key[WEBHOOK_KEY_MAX];
    size_t keylen;
    if (!webhook_secret_key(secret, key, &keylen))
        return WEBHOOK_VERIFY_BAD_SECRET;
    long long ts;
    if (!parse_timestamp(timestamp, &ts))
        return WEBHOOK_VERIFY_BAD_TIMESTAMP;
    if (ts < now - tolerance || ts > now + tolerance)
        return WEBHOOK_VERIFY_STALE;

    uint8_t expected[SHA256_LEN];
    signed_content_mac(key, keylen, id, timestamp, body, bodylen, expected);
    /* Check every entry, without stopping at the first match, so that the time taken
     * does not tell which entry matched. */
    bool match = false;
    const char *p = header;
    while (*p != '\0') {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len > 0 && entry_matches(p, len, expected))
            match = true;
        p += len;
    }
    return match ? WEBHOOK_VERIFY_OK : WEBHOOK_VERIFY_MISMATCH;
}
