/* crypto: known-answer vectors, base64 canonical decoding, sealing, random strings. */
#include <string.h>

#include "buf.h"
#include "crypto.h"
#include "unit.h"

static buf out;

static void setup(void)
{
    buf_init(&out, 128);
}

static void teardown(void)
{
    buf_free(&out);
}

static const char *hex(const uint8_t *data, size_t len)
{
    buf_clear(&out);
    hex_encode(&out, data, len);
    return out.data;
}

static const char *sha256_hex(const void *data, size_t len)
{
    uint8_t digest[SHA256_LEN];
    crypto_sha256(data, len, digest);
    return hex(digest, sizeof digest);
}

START_TEST(sha256_known_answers)
{
    /* FIPS 180-2 appendix B and the empty message. */
    ck_assert_str_eq(sha256_hex("abc", 3),
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_str_eq(sha256_hex("", 0),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ck_assert_str_eq(sha256_hex(two_blocks, strlen(two_blocks)),
                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    static char million[1000000];
    memset(million, 'a', sizeof million);
    ck_assert_str_eq(sha256_hex(million, sizeof million),
                     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(api_key_hash)
{
    /* Keys are stored as SHA-256 of the whole key string, prefix included. */
    const char *key = "sk_test_4eC39HqLyjWDarjtT1zdp7dcAbCdEfGh";
    ck_assert_str_eq(sha256_hex(key, strlen(key)),
                     "83d9fdc9f712ce813fbcfcb93526d90a7faf49a77caa7de585ba6247b4499f97");
}
END_TEST

static const char *hmac_hex(const void *key, size_t keylen, const void *data, size_t len)
{
    uint8_t mac[SHA256_LEN];
    crypto_hmac_sha256(key, keylen, data, len, mac);
    return hex(mac, sizeof mac);
}

START_TEST(hmac_rfc4231)
{
    uint8_t key[131], data[50];

    memset(key, 0x0b, 20);
    ck_assert_str_eq(hmac_hex(key, 20, "Hi There", 8),
                     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

    ck_assert_str_eq(hmac_hex("Jefe", 4, "what do ya want for nothing?", 28),
                     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    memset(key, 0xaa, 20);
    memset(data, 0xdd, 50);
    ck_assert_str_eq(hmac_hex(key, 20, data, 50),
                     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");

    for (int i = 0; i < 25; i++)
        key[i] = (uint8_t)(i + 1);
    memset(data, 0xcd, 50);
    ck_assert_str_eq(hmac_hex(key, 25, data, 50),
                     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");

    memset(key, 0x0c, 20);
    ck_assert_str_eq(hmac_hex(key, 20, "Test With Truncation", 20),
                     "a3b6167473100ee06e0c796c2955552bfa6f7c0a6a8aef8b93f860aab0cd20c5");

    memset(key, 0xaa, 131);
    const char *t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    ck_assert_str_eq(hmac_hex(key, 131, t6, strlen(t6)),
                     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const char *t7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    ck_assert_str_eq(hmac_hex(key, 131, t7, strlen(t7)),
                     "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}
END_TEST

START_TEST(derive_is_hmac_of_purpose)
{
    const char *secret = "a server secret of at least 32 bytes";
    uint8_t cursor_key[SHA256_LEN], link_key[SHA256_LEN], expected[SHA256_LEN];
    crypto_derive(secret, strlen(secret), "cursor", cursor_key);
    crypto_derive(secret, strlen(secret), "link", link_key);
    crypto_hmac_sha256(secret, strlen(secret), "cursor", 6, expected);
    ck_assert_mem_eq(cursor_key, expected, SHA256_LEN);
    ck_assert(!crypto_equal(cursor_key, link_key, SHA256_LEN));
}
END_TEST

START_TEST(hex_encoding)
{
    const uint8_t data[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    ck_assert_str_eq(hex(data, sizeof data), "00017f80abff");
    ck_assert_str_eq(hex(data, 0), "");
}
END_TEST

static const char *b64(const char *data, bool url)
{
    buf_clear(&out);
    if (url)
        base64url_encode(&out, data, strlen(data));
    else
        base64_encode(&out, data, strlen(data));
    return out.data;
}

START_TEST(base64_rfc4648_vectors)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const std[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    static const char *const url[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        ck_assert_str_eq(b64(plain[i], false), std[i]);
        ck_assert_str_eq(b64(plain[i], true), url[i]);
    }
    ck_assert_str_eq(b64("\xfb\xff", false), "+/8=");
    ck_assert_str_eq(b64("\xfb\xff", true), "-_8");
}
END_TEST

/* Decodes text (std or url alphabet) into a buffer of cap bytes; -1 when rejected. */
static long b64_decoded(const char *text, bool url, uint8_t *dst, size_t cap)
{
    size_t n = cap;
    bool ok = url ? base64url_decode(text, strlen(text), dst, &n)
                  : base64_decode(text, strlen(text), dst, &n);
    return ok ? (long)n : -1;
}

START_TEST(base64_round_trip_all_lengths)
{
    uint8_t data[80], back[80];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof data; len++) {
        for (int url = 0; url <= 1; url++) {
            buf_clear(&out);
            if (url)
                base64url_encode(&out, data, len);
            else
                base64_encode(&out, data, len);
            ck_assert_int_eq(b64_decoded(out.data, url, back, sizeof back), (long)len);
            ck_assert_mem_eq(back, data, len);
            /* An output buffer one byte short is refused, never overrun. */
            if (len > 0)
                ck_assert_int_eq(b64_decoded(out.data, url, back, len - 1), -1);
        }
    }
}
END_TEST

START_TEST(base64_rejects_non_canonical)
{
    uint8_t dst[64];
    static const char *const bad_std[] = {
        "Zh==", "Zm9=",   "Zg",       "Zg=",   "Zg===",  "=",       "==",
        "Z===", "Zm9v\n", " Zm9v",    "Zm 9v", "Zm9vYg", "Zm9vYg=", "Zg==Zg==",
        "Zm-v", "Zm_v",   "Zm9v====", "A",     "Zm=v",
    };
    for (size_t i = 0; i < sizeof bad_std / sizeof bad_std[0]; i++)
        ck_assert_msg(b64_decoded(bad_std[i], false, dst, sizeof dst) < 0, "std accepted \"%s\"",
                      bad_std[i]);
    static const char *const bad_url[] = {"Zh", "Zm9",   "Zg==",   "Zm8=", "Zm+v", "Zm/v",
                                          "A",  "Zm9vY", "Zm9v\n", "Zg.",  "-_9"};
    for (size_t i = 0; i < sizeof bad_url / sizeof bad_url[0]; i++)
        ck_assert_msg(b64_decoded(bad_url[i], true, dst, sizeof dst) < 0, "url accepted \"%s\"",
                      bad_url[i]);
    ck_assert_int_eq(b64_decoded("Zm9v", false, dst, sizeof dst), 3);
    ck_assert_int_eq(b64_decoded("-_8", true, dst, sizeof dst), 2);
    ck_assert_int_eq(dst[0], 0xfb);
    ck_assert_int_eq(dst[1], 0xff);
    /* The text length bounds the input: a NUL inside it is not a base64 character. */
    size_t n = sizeof dst;
    ck_assert(!base64_decode("Zm\0v", 4, dst, &n));
}
END_TEST

START_TEST(seal_open_round_trip)
{
    uint8_t key[32];
    crypto_random(key, sizeof key);
    static const char *const secrets[] = {"", "x", "whsec_c2VjcmV0IG9mIDMyIGJ5dGVz"};
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        buf sealed, plain;
        buf_init(&sealed, 64);
        buf_init(&plain, 64);
        crypto_seal(key, secrets[i], strlen(secrets[i]), &sealed);
        ck_assert(crypto_open(key, sealed.data, &plain));
        ck_assert_uint_eq(plain.len, strlen(secrets[i]));
        ck_assert_mem_eq(plain.data, secrets[i], plain.len);
        buf_free(&sealed);
        buf_free(&plain);
    }
}
END_TEST

START_TEST(seal_uses_fresh_nonces)
{
    uint8_t key[32] = {1};
    buf x, y;
    buf_init(&x, 64);
    buf_init(&y, 64);
    crypto_seal(key, "same", 4, &x);
    crypto_seal(key, "same", 4, &y);
    ck_assert_str_ne(x.data, y.data);
    buf_free(&x);
    buf_free(&y);
}
END_TEST

START_TEST(open_detects_tampering)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    uint8_t key[32] = {7}, other[32] = {8};
    buf sealed, plain;
    buf_init(&sealed, 64);
    buf_init(&plain, 64);
    crypto_seal(key, "a webhook secret", 16, &sealed);
    ck_assert(!crypto_open(other, sealed.data, &plain));
    for (size_t i = 0; i < sealed.len; i++) {
        char original = sealed.data[i];
        for (const char *c = alphabet; *c != '\0'; c++) {
            if (*c == original)
                continue;
            sealed.data[i] = *c;
            ck_assert_msg(!crypto_open(key, sealed.data, &plain), "accepted byte %zu = %c", i, *c);
        }
        sealed.data[i] = original;
    }
    sealed.data[sealed.len - 4] = '\0';
    ck_assert(!crypto_open(key, sealed.data, &plain));
    ck_assert(!crypto_open(key, "", &plain));
    ck_assert(!crypto_open(key, "not base64!", &plain));
    ck_assert(!crypto_open(key, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &plain));
    ck_assert_uint_eq(plain.len, 0);
    buf_free(&sealed);
    buf_free(&plain);
}
END_TEST

START_TEST(random_alnum_alphabet_and_length)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    bool seen[256] = {false};
    char s[101];
    for (int round = 0; round < 200; round++) {
        memset(s, '#', sizeof s);
        crypto_random_alnum(s, 100);
        ck_assert_uint_eq(strlen(s), 100);
        ck_assert_uint_eq(strspn(s, alphabet), 100);
        for (int i = 0; i < 100; i++)
            seen[(unsigned char)s[i]] = true;
    }
    /* 20000 draws: missing any of the 62 characters would mean a broken distribution. */
    for (const char *c = alphabet; *c != '\0'; c++)
        ck_assert_msg(seen[(unsigned char)*c], "never drew '%c'", *c);

    char one[2] = "##", empty[1] = "#";
    crypto_random_alnum(one, 1);
    /* cppcheck-suppress invalidFunctionArgStr ; crypto_random_alnum wrote the NUL */
    ck_assert_uint_eq(strlen(one), 1);
    crypto_random_alnum(empty, 0);
    ck_assert_str_eq(empty, "");

    char x[33], y[33];
    crypto_random_alnum(x, 32);
    crypto_random_alnum(y, 32);
    ck_assert_str_ne(x, y);
}
END_TEST

START_TEST(random_bytes_differ)
{
    uint8_t x[32], y[32];
    crypto_random(x, sizeof x);
    crypto_random(y, sizeof y);
    ck_assert(!crypto_equal(x, y, sizeof x));
}
END_TEST

START_TEST(equal_compares_every_byte)
{
    uint8_t x[40], y[40];
    for (size_t i = 0; i < sizeof x; i++)
        x[i] = y[i] = (uint8_t)i;
    ck_assert(crypto_equal(x, y, sizeof x));
    ck_assert(crypto_equal(x, y, 0));
    for (size_t i = 0; i < sizeof x; i++) {
        for (int bit = 0; bit < 8; bit++) {
            y[i] ^= (uint8_t)(1u << bit);
            ck_assert(!crypto_equal(x, y, sizeof x));
            y[i] ^= (uint8_t)(1u << bit);
        }
    }
    y[39] ^= 1;
    ck_assert(crypto_equal(x, y, 39));
}
END_TEST

START_TEST(hex_write_and_decode)
{
    const uint8_t data[] = {0x00, 0x9f, 0xa0, 0xff};
    char text[2 * sizeof data + 1];
    hex_write(text, data, sizeof data);
    ck_assert_str_eq(text, "009fa0ff");
    uint8_t back[sizeof data];
    ck_assert(hex_decode("009FA0ff", back, sizeof back));
    ck_assert_mem_eq(back, data, sizeof data);
    ck_assert(!hex_decode("009fa0f", back, sizeof back));    /* odd length */
    ck_assert(!hex_decode("009fa0ff00", back, sizeof back)); /* too long */
    ck_assert(!hex_decode("009fa0fg", back, sizeof back));   /* not hex */
}
END_TEST

Suite *crypto_suite(void)
{
    Suite *s = suite_create("crypto");
    TCase *hash = tcase_create("hash");
    tcase_add_checked_fixture(hash, setup, teardown);
    tcase_add_test(hash, sha256_known_answers);
    tcase_add_test(hash, api_key_hash);
    tcase_add_test(hash, hmac_rfc4231);
    tcase_add_test(hash, derive_is_hmac_of_purpose);
    tcase_add_test(hash, hex_encoding);
    tcase_add_test(hash, hex_write_and_decode);
    suite_add_tcase(s, hash);
    TCase *b64case = tcase_create("base64");
    tcase_add_checked_fixture(b64case, setup, teardown);
    tcase_add_test(b64case, base64_rfc4648_vectors);
    tcase_add_test(b64case, base64_round_trip_all_lengths);
    tcase_add_test(b64case, base64_rejects_non_canonical);
    suite_add_tcase(s, b64case);
    TCase *seal = tcase_create("seal");
    tcase_add_test(seal, seal_open_round_trip);
    tcase_add_test(seal, seal_uses_fresh_nonces);
    tcase_add_test(seal, open_detects_tampering);
    suite_add_tcase(s, seal);
    TCase *random = tcase_create("random");
    tcase_add_test(random, random_alnum_alphabet_and_length);
    tcase_add_test(random, random_bytes_differ);
    tcase_add_test(random, equal_compares_every_byte);
    suite_add_tcase(s, random);
    return s;
}
