/* Base64 (standard, padded) and base64url (unpadded): only canonical text decodes, every
 * accepted text re-encodes to itself, output bounds are respected, and round trips hold;
 * crypto_open never accepts forged text and seal/open round-trips.
 * Input: one control byte (bit 0: url alphabet, bit 1: tight output buffer), then data. */
#include "buf.h"
#include "crypto.h"
#include "fuzz.h"

static const char std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Decoded length of a canonical text, or -1: RFC 4648 section 3.5 read strictly. */
static long ref_decoded_len(const char *text, size_t n, bool url)
{
    const char *alphabet = url ? url_alphabet : std_alphabet;
    size_t pad = 0;
    if (!url) {
        if (n % 4 != 0)
            return -1;
        while (pad < 2 && pad < n && text[n - 1 - pad] == '=')
            pad++;
        if (pad > 0 && n - pad > 0 && text[n - pad - 1] == '=')
            return -1;
    }
    size_t chars = n - pad;
    if (chars % 4 == 1 || (!url && pad > 0 && (chars % 4) + pad != 4))
        return -1;
    for (size_t i = 0; i < chars; i++)
        if (text[i] == '\0' || strchr(alphabet, text[i]) == NULL)
            return -1;
    if (chars % 4 != 0) {
        /* The last character carries 2 (of 2 bytes) or 4 (of 1 byte) unused low bits. */
        int last = (int)(strchr(alphabet, text[chars - 1]) - alphabet);
        int unused = chars % 4 == 2 ? 15 : 3;
        if ((last & unused) != 0)
            return -1;
    }
    return (long)(chars / 4 * 3 + (chars % 4 == 0 ? 0 : chars % 4 - 1));
}

static void check_decode(const char *text, size_t n, bool url, bool tight)
{
    long want = ref_decoded_len(text, n, url);
    size_t cap = tight && want > 0 ? (size_t)want - 1 : n;
    uint8_t *out = malloc(cap + 1);
    size_t len = cap;
    bool ok = url ? base64url_decode(text, n, out, &len) : base64_decode(text, n, out, &len);
    FUZZ_CHECK(ok == (want >= 0 && (size_t)want <= cap));
    if (ok) {
        FUZZ_CHECK(len == (size_t)want);
        buf again;
        buf_init(&again, n + 1);
        if (url)
            base64url_encode(&again, out, len);
        else
            base64_encode(&again, out, len);
        FUZZ_CHECK(again.len == n && memcmp(again.data, text, n) == 0);
        buf_free(&again);
    }
    free(out);
}

static void check_encode(const uint8_t *data, size_t n, bool url)
{
    buf text;
    buf_init(&text, 64);
    if (url)
        base64url_encode(&text, data, n);
    else
        base64_encode(&text, data, n);
    size_t want = url ? (4 * n + 2) / 3 : (n + 2) / 3 * 4;
    FUZZ_CHECK(text.len == want);
    if (url)
        FUZZ_CHECK(strspn(text.data, url_alphabet) == text.len);
    uint8_t *back = malloc(n + 1);
    size_t len = n;
    bool ok = url ? base64url_decode(text.data, text.len, back, &len)
                  : base64_decode(text.data, text.len, back, &len);
    FUZZ_CHECK(ok && len == n && memcmp(back, data, n) == 0);
    free(back);
    buf_free(&text);
}

static void check_seal(const uint8_t *data, size_t n)
{
    static const uint8_t key[32] = {1, 2, 3};
    buf sealed, plain;
    buf_init(&sealed, 64);
    buf_init(&plain, 64);
    /* Arbitrary text is never authentic. */
    char *text = fuzz_strndup(data, n);
    FUZZ_CHECK(!crypto_open(key, text, &plain) && plain.len == 0);
    free(text);
    crypto_seal(key, data, n, &sealed);
    FUZZ_CHECK(crypto_open(key, sealed.data, &plain));
    FUZZ_CHECK(plain.len == n && memcmp(plain.data, data, n) == 0);
    buf_free(&sealed);
    buf_free(&plain);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready)
        ready = crypto_init();
    if (size == 0)
        return 0;
    bool url = data[0] & 1, tight = data[0] & 2;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    check_decode(text, n, url, tight);
    check_encode(data + 1, n, url);
    check_seal(data + 1, n);
    return 0;
}
