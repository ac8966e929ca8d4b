/* Standard Webhooks signatures: what webhook_sign produces webhook_verify accepts, and a
 * header verifies only when one of its entries is exactly the right signature.
 * Input: secret, id, timestamp and header lines separated by '\n', then the body. */
#include "buf.h"
#include "crypto.h"
#include "fuzz.h"
#include "webhook_sign.h"

#define NOW 1790000000LL
#define TOLERANCE 300

/* The next '\n'-terminated part of the input, as a C string (NULL when none is left). */
static char *next_part(const uint8_t **data, size_t *size)
{
    const uint8_t *nl = memchr(*data, '\n', *size);
    if (nl == NULL)
        return NULL;
    char *part = fuzz_strndup(*data, (size_t)(nl - *data));
    *size -= (size_t)(nl - *data) + 1;
    *data = nl + 1;
    return part;
}

/* True when one space-separated entry of header is exactly want. */
static bool header_has(const char *header, const char *want)
{
    size_t n = strlen(want);
    for (const char *p = header; *p != '\0';) {
        size_t len = strcspn(p, " ");
        if (len == n && memcmp(p, want, n) == 0)
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

static bool timestamp_ok(const char *text, long long *ts)
{
    size_t n = strlen(text);
    if (n == 0 || n > 18 || strspn(text, "0123456789") != n)
        return false;
    *ts = strtoll(text, NULL, 10);
    return true;
}

/* Arbitrary headers: OK exactly when the right signature is among the entries. */
static void check_verify(const char *secret, const char *id, const char *timestamp,
                         const char *header, const char *body, size_t bodylen)
{
    webhook_verify_result got =
        webhook_verify(secret, id, timestamp, body, bodylen, header, NOW, TOLERANCE);
    uint8_t key[WEBHOOK_KEY_MAX];
    size_t keylen;
    long long ts;
    if (!webhook_secret_key(secret, key, &keylen)) {
        FUZZ_CHECK(got == WEBHOOK_VERIFY_BAD_SECRET);
        return;
    }
    FUZZ_CHECK(keylen >= WEBHOOK_KEY_MIN && keylen <= WEBHOOK_KEY_MAX);
    if (!timestamp_ok(timestamp, &ts)) {
        FUZZ_CHECK(got == WEBHOOK_VERIFY_BAD_TIMESTAMP);
        return;
    }
    if (ts < NOW - TOLERANCE || ts > NOW + TOLERANCE) {
        FUZZ_CHECK(got == WEBHOOK_VERIFY_STALE);
        return;
    }
    /* The signer writes the timestamp without leading zeros; the MAC covers the text. */
    if (timestamp[0] == '0')
        return;
    buf want;
    buf_init(&want, 64);
    webhook_sign(key, keylen, id, ts, body, bodylen, &want);
    FUZZ_CHECK((got == WEBHOOK_VERIFY_OK) == header_has(header, want.data));
    buf_free(&want);
}

/* A fresh signature always verifies, among other entries too, and only for its body. */
static void check_round_trip(const uint8_t *raw_key, size_t keylen, const char *id,
                             const char *body, size_t bodylen)
{
    buf secret, sig, header;
    buf_init(&secret, 64);
    buf_init(&sig, 64);
    buf_init(&header, 64);
    buf_puts(&secret, WEBHOOK_SECRET_PREFIX);
    base64_encode(&secret, raw_key, keylen);
    webhook_sign(raw_key, keylen, id, NOW, body, bodylen, &sig);
    FUZZ_CHECK(strncmp(sig.data, "v1,", 3) == 0 && sig.len == 3 + 44);
    FUZZ_CHECK(webhook_verify(secret.data, id, "1790000000", body, bodylen, sig.data, NOW,
                              TOLERANCE) == WEBHOOK_VERIFY_OK);
    /* Without the prefix, as the Standard Webhooks libraries also accept. */
    FUZZ_CHECK(webhook_verify(secret.data + strlen(WEBHOOK_SECRET_PREFIX), id, "1790000000", body,
                              bodylen, sig.data, NOW, TOLERANCE) == WEBHOOK_VERIFY_OK);
    buf_printf(&header, "v1,AAAA  v2,%s %s ", sig.data + 3, sig.data);
    FUZZ_CHECK(webhook_verify(secret.data, id, "1790000000", body, bodylen, header.data, NOW,
                              TOLERANCE) == WEBHOOK_VERIFY_OK);
    FUZZ_CHECK(webhook_verify(secret.data, id, "1790000001", body, bodylen, sig.data, NOW,
                              TOLERANCE) == WEBHOOK_VERIFY_MISMATCH);
    FUZZ_CHECK(webhook_verify(secret.data, id, "1790000000", body, bodylen, sig.data,
                              NOW + TOLERANCE + 1, TOLERANCE) == WEBHOOK_VERIFY_STALE);
    if (bodylen > 0)
        FUZZ_CHECK(webhook_verify(secret.data, id, "1790000000", body, bodylen - 1, sig.data, NOW,
                                  TOLERANCE) == WEBHOOK_VERIFY_MISMATCH);
    buf_free(&secret);
    buf_free(&sig);
    buf_free(&header);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready)
        ready = crypto_init();
    const uint8_t *raw = data;
    size_t raw_size = size;
    char *parts[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    while (n < 4 && (parts[n] = next_part(&data, &size)) != NULL)
        n++;
    if (n == 4)
        check_verify(parts[0], parts[1], parts[2], parts[3], (const char *)data, size);
    if (raw_size >= WEBHOOK_KEY_MIN) {
        size_t keylen = raw_size < WEBHOOK_KEY_MAX ? raw_size : WEBHOOK_KEY_MAX;
        const char *id = n > 1 ? parts[1] : "evt_1";
        check_round_trip(raw, keylen, id, (const char *)data, size);
    }
    for (int i = 0; i < n; i++)
        free(parts[i]);
    return 0;
}
