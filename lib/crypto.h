/* crypto: the few primitives the service needs, all on libgcrypt.
 *
 * Keys and secrets pass through here and nowhere else; nothing in this file logs. */
#ifndef MARKET_CRYPTO_H
#define MARKET_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SHA256_LEN 32

/* Initialises libgcrypt once per process; false if the library is too old. */
bool crypto_init(void);

void crypto_sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);
void crypto_hmac_sha256(const void *key, size_t keylen, const void *data, size_t len,
                        uint8_t out[SHA256_LEN]);

/* Cryptographically strong random bytes. */
void crypto_random(void *out, size_t n);

/* n random characters of [A-Za-z0-9], uniformly (rejection sampling), then a NUL. */
void crypto_random_alnum(char *out, size_t n);

/* Compares two byte strings in time that depends only on n. */
bool crypto_equal(const void *a, const void *b, size_t n);

/* Derives a 32-byte subkey for one purpose ("market cursor v1", "market download link v1",
 * "market webhook secret v1") from the server secret, so that one secret never keys two
 * different things. */
void crypto_derive(const void *secret, size_t secretlen, const char *purpose,
                   uint8_t out[SHA256_LEN]);

/* Base64: standard alphabet with padding, and the URL-safe alphabet without padding.
 * Encoders append to b; decoders write at most *outlen bytes and fail on anything but a
 * canonical encoding. */
void base64_encode(buf *b, const void *data, size_t len);
void base64url_encode(buf *b, const void *data, size_t len);
bool base64_decode(const char *text, size_t textlen, uint8_t *out, size_t *outlen);
bool base64url_decode(const char *text, size_t textlen, uint8_t *out, size_t *outlen);

/* Authenticated encryption (AES-256-GCM) of a short secret for storage at rest: appends
 * base64(nonce || ciphertext || tag) to b. crypto_open reverses it and fails if the text
 * was altered or the key is wrong. */
void crypto_seal(const uint8_t key[32], const void *plain, size_t len, buf *b);
bool crypto_open(const uint8_t key[32], const char *sealed, buf *plain);

/* Lower-case hex of data, appended to b. */
void hex_encode(buf *b, const void *data, size_t len);

/* Lower-case hex of data into out, which holds 2 * len + 1 bytes (NUL-terminated). */
void hex_write(char *out, const void *data, size_t len);

/* Decodes exactly 2 * len hex digits (either case) of text into out[0..len); false on a
 * wrong length or a non-hex character. */
bool hex_decode(const char *text, uint8_t *out, size_t len);

#endif
