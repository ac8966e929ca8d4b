/* crypto: the one file that calls libgcrypt, so that the algorithms, the key sizes and
 * the sealed format (AES-256-GCM: nonce, ciphertext and tag, in base64) are chosen and
 * reviewed in one place. base64 and hex live here because tokens and secrets are what
 * they encode. */
#include "crypto.h"

#include <gcrypt.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "text.h"

#define GCM_NONCE_LEN 12
#define GCM_TAG_LEN 16

bool crypto_init(void)
{
    if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P))
        return true;
    if (gcry_check_version("1.8.0") == NULL)
        return false;
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    return true;
}

void crypto_sha256(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
    gcry_md_hash_buffer(GCRY_MD_SHA256, out, data, len);
}

void crypto_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                        uint8_t out[SHA256_LEN])
{
    gcry_md_hd_t h;
    if (gcry_md_open(&h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC) != 0)
        abort();
    if (gcry_md_setkey(h, key, keylen) != 0)
        abort();
    gcry_md_write(h, data, len);
    memcpy(out, gcry_md_read(h, GCRY_MD_SHA256), SHA256_LEN);
    gcry_md_close(h);
}

void crypto_random(void *out, size_t n)
{
    gcry_randomize(out, n, GCRY_STRONG_RANDOM);
}

void crypto_random_alnum(char *out, size_t n)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char pool[64];
    size_t filled = 0;
    while (filled < n) {
        crypto_random(pool, sizeof pool);
        for (size_t i = 0; i < sizeof pool && filled < n; i++) {
            /* 248 = 62 * 4: bytes at or above it would bias the first letters. */
            if (pool[i] < 248)
                out[filled++] = alphabet[pool[i] % 62];
        }
    }
    out[n] = '\0';
}

bool crypto_equal(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= x[i] ^ y[i];
    return diff == 0;
}

void crypto_derive(const void *secret, size_t secretlen, const char *purpose,
                   uint8_t out[SHA256_LEN])
{
    crypto_hmac_sha256(secret, secretlen, purpose, strlen(purpose), out);
}

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char b64_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void b64_encode(buf *b, const void *data, size_t len, const char *alphabet, bool pad)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        char q[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63],
                     alphabet[v & 63]};
        buf_append(b, q, 4);
    }
    size_t rest = len - i;
    if (rest == 0)
        return;
    unsigned v = (unsigned)p[i] << 16 | (rest == 2 ? (unsigned)p[i + 1] << 8 : 0);
    buf_putc(b, alphabet[v >> 18]);
    buf_putc(b, alphabet[(v >> 12) & 63]);
    if (rest == 2)
        buf_putc(b, alphabet[(v >> 6) & 63]);
    if (pad)
        buf_puts(b, rest == 2 ? "=" : "==");
}

static int b64_value(char c, const char *alphabet)
{
    const char *hit = c != '\0' ? memchr(alphabet, c, 64) : NULL;
    return hit != NULL ? (int)(hit - alphabet) : -1;
}

static bool b64_decode(const char *text, size_t textlen, uint8_t *out, size_t *outlen,
                       const char *alphabet, bool pad)
{
    if (pad) {
        if (textlen % 4 != 0)
            return false;
        if (textlen > 0 && text[textlen - 1] == '=')
            textlen--;
        if (textlen > 0 && text[textlen - 1] == '=')
            textlen--;
    }
    if (textlen % 4 == 1)
        return false;
    size_t need = textlen / 4 * 3 + (textlen % 4 == 0 ? 0 : textlen % 4 - 1);
    if (need > *outlen)
        return false;
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (size_t i = 0; i < textlen; i++) {
        int v = b64_value(text[i], alphabet);
        if (v < 0)
            return false;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    /* Canonical form only: the unused low bits of the last character must be zero, so
     * that one value has exactly one encoding. */
    if ((acc & ((1u << bits) - 1)) != 0)
        return false;
    *outlen = n;
    return true;
}

void base64_encode(buf *b, const void *data, size_t len)
{
    b64_encode(b, data, len, b64_std, true);
}

void base64url_encode(buf *b, const void *data, size_t len)
{
    b64_encode(b, data, len, b64_url, false);
}

bool base64_decode(const char *text, size_t textlen, uint8_t *out, size_t *outlen)
{
    return b64_decode(text, textlen, out, outlen, b64_std, true);
}

bool base64url_decode(const char *text, size_t textlen, uint8_t *out, size_t *outlen)
{
    return b64_decode(text, textlen, out, outlen, b64_url, false);
}

void crypto_seal(const uint8_t key[32], const void *plain, size_t len, buf *b)
{
    size_t total = GCM_NONCE_LEN + len + GCM_TAG_LEN;
    uint8_t *blob = xmalloc(total);
    crypto_random(blob, GCM_NONCE_LEN);

    gcry_cipher_hd_t h;
    if (gcry_cipher_open(&h, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, 0) != 0 ||
        gcry_cipher_setkey(h, key, 32) != 0 || gcry_cipher_setiv(h, blob, GCM_NONCE_LEN) != 0 ||
        gcry_cipher_encrypt(h, blob + GCM_NONCE_LEN, len, plain, len) != 0 ||
        gcry_cipher_gettag(h, blob + GCM_NONCE_LEN + len, GCM_TAG_LEN) != 0)
        abort();
    gcry_cipher_close(h);
    base64_encode(b, blob, total);
    free(blob);
}

bool crypto_open(const uint8_t key[32], const char *sealed, buf *plain)
{
    size_t textlen = strlen(sealed);
    size_t cap = textlen / 4 * 3 + 3;
    uint8_t *blob = xmalloc(cap);
    size_t n = cap;
    bool ok = base64_decode(sealed, textlen, blob, &n) && n >= GCM_NONCE_LEN + GCM_TAG_LEN;
    if (ok) {
        size_t len = n - GCM_NONCE_LEN - GCM_TAG_LEN;
        uint8_t *out = xmalloc(len + 1);
        gcry_cipher_hd_t h;
        ok = gcry_cipher_open(&h, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, 0) == 0;
        if (ok) {
            ok = gcry_cipher_setkey(h, key, 32) == 0 &&
                 gcry_cipher_setiv(h, blob, GCM_NONCE_LEN) == 0 &&
                 gcry_cipher_decrypt(h, out, len, blob + GCM_NONCE_LEN, len) == 0 &&
                 gcry_cipher_checktag(h, blob + GCM_NONCE_LEN + len, GCM_TAG_LEN) == 0;
            gcry_cipher_close(h);
        }
        if (ok)
            buf_append(plain, out, len);
        free(out);
    }
    free(blob);
    return ok;
}

void hex_write(char *out, const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * len] = '\0';
}

void hex_encode(buf *b, const void *data, size_t len)
{
    for (const unsigned char *p = data; len > 0; p++, len--) {
        char pair[3];
        hex_write(pair, p, 1);
        buf_append(b, pair, 2);
    }
}

bool hex_decode(const char *text, uint8_t *out, size_t len)
{
    if (strlen(text) != 2 * len)
        return false;
    for (size_t i = 0; i < len; i++) {
        int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}
