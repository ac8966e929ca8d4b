/* api/links: download link tokens, their MAC and the hash the database keeps. */
#include <string.h>

#include "api/orders/links.h"
#include "crypto.h"
#include "unit.h"

/* A vector computed outside this code base (Python's hmac and base64 modules): key bytes
 * 0..31, link id bytes a0..af. */
#define KAT_ID_HEX "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
#define KAT_TOKEN "oKGio6SlpqeoqaqrrK2ur6dfC6LpIxXTh0yc3A3mQzY"
#define KAT_HASH "1ed15156198aeaf31dbd75cb1af6f3fafe790d4b6b0753c73b6213bdf1120da5"

static worker w;

static void setup(void)
{
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < sizeof w.link_key; i++)
        w.link_key[i] = (uint8_t)i;
}

START_TEST(known_answer)
{
    char token[LINK_TOKEN_LEN + 1];
    ck_assert(link_token_from_hex(&w, KAT_ID_HEX, token));
    ck_assert_str_eq(token, KAT_TOKEN);
    char hash[LINK_HEX_HASH_LEN + 1];
    ck_assert(link_token_check(&w, KAT_TOKEN, strlen(KAT_TOKEN), hash));
    ck_assert_str_eq(hash, KAT_HASH);
}
END_TEST

START_TEST(fresh_links_verify_and_can_be_rebuilt)
{
    link_fresh a, b;
    link_generate(&w, &a);
    link_generate(&w, &b);
    ck_assert_int_eq(strlen(a.token), LINK_TOKEN_LEN);
    ck_assert_uint_eq(strspn(a.token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789-_"),
                      LINK_TOKEN_LEN);
    ck_assert_int_eq(strlen(a.id_hex), LINK_HEX_ID_LEN);
    ck_assert_str_ne(a.token, b.token);
    ck_assert_str_ne(a.id_hex, b.id_hex);

    char hash[LINK_HEX_HASH_LEN + 1];
    ck_assert(link_token_check(&w, a.token, LINK_TOKEN_LEN, hash));
    ck_assert_str_eq(hash, a.hash_hex);
    /* The hash is SHA-256 of the token's text, the key of its download_tokens row. */
    uint8_t digest[SHA256_LEN];
    char want[LINK_HEX_HASH_LEN + 1];
    crypto_sha256(a.token, LINK_TOKEN_LEN, digest);
    hex_write(want, digest, SHA256_LEN);
    ck_assert_str_eq(a.hash_hex, want);

    char again[LINK_TOKEN_LEN + 1];
    ck_assert(link_token_from_hex(&w, a.id_hex, again));
    ck_assert_str_eq(again, a.token);
}
END_TEST

START_TEST(forged_tokens_fail)
{
    char hash[LINK_HEX_HASH_LEN + 1] = "";
    char token[] = KAT_TOKEN;
    /* Every single-character change, in the id part or the MAC part. */
    for (size_t i = 0; i < LINK_TOKEN_LEN; i++) {
        char saved = token[i];
        token[i] = saved == 'A' ? 'B' : 'A';
        ck_assert_msg(!link_token_check(&w, token, LINK_TOKEN_LEN, hash), "changed at %zu", i);
        token[i] = saved;
    }
    ck_assert_str_eq(hash, ""); /* untouched on failure */
    /* The same token under another key. */
    w.link_key[0] ^= 1;
    ck_assert(!link_token_check(&w, KAT_TOKEN, LINK_TOKEN_LEN, hash));
}
END_TEST

START_TEST(only_the_canonical_spelling)
{
    /* The last character carries 4 bits and two zero bits; with those set, a lenient
     * decoder would read the same bytes, and the token would have a second hash. */
    char token[] = KAT_TOKEN;
    ck_assert_int_eq(token[LINK_TOKEN_LEN - 1], 'Y');
    token[LINK_TOKEN_LEN - 1] = 'Z';
    char hash[LINK_HEX_HASH_LEN + 1];
    ck_assert(!link_token_check(&w, token, LINK_TOKEN_LEN, hash));
}
END_TEST

START_TEST(wrong_lengths_and_alphabet_fail)
{
    char hash[LINK_HEX_HASH_LEN + 1];
    ck_assert(!link_token_check(&w, KAT_TOKEN, LINK_TOKEN_LEN - 1, hash));
    ck_assert(!link_token_check(&w, KAT_TOKEN "A", LINK_TOKEN_LEN + 1, hash));
    ck_assert(!link_token_check(&w, "", 0, hash));
    char token[] = KAT_TOKEN;
    token[5] = '+'; /* standard base64, not base64url */
    ck_assert(!link_token_check(&w, token, LINK_TOKEN_LEN, hash));
    token[5] = '=';
    ck_assert(!link_token_check(&w, token, LINK_TOKEN_LEN, hash));
}
END_TEST

START_TEST(rebuilding_needs_32_hex_digits)
{
    char token[LINK_TOKEN_LEN + 1];
    ck_assert(!link_token_from_hex(&w, "", token));
    ck_assert(!link_token_from_hex(&w, "a0a1", token));
    ck_assert(!link_token_from_hex(&w, KAT_ID_HEX "00", token));
    ck_assert(!link_token_from_hex(&w, "z0a1a2a3a4a5a6a7a8a9aaabacadaeaf", token));
}
END_TEST

START_TEST(url_is_the_base_and_the_token)
{
    arena a;
    arena_init(&a, 256);
    w.cfg.download_base_url = "https://files.example/dl";
    request r;
    memset(&r, 0, sizeof r);
    r.w = &w;
    r.arena = &a;
    ck_assert_str_eq(link_url(&r, KAT_TOKEN), "https://files.example/dl/" KAT_TOKEN);
    arena_free(&a);
}
END_TEST

Suite *links_suite(void)
{
    Suite *s = suite_create("links");
    TCase *t = tcase_create("token");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_add_test(t, known_answer);
    tcase_add_test(t, fresh_links_verify_and_can_be_rebuilt);
    tcase_add_test(t, forged_tokens_fail);
    tcase_add_test(t, only_the_canonical_spelling);
    tcase_add_test(t, wrong_lengths_and_alphabet_fail);
    tcase_add_test(t, rebuilding_needs_32_hex_digits);
    tcase_add_test(t, url_is_the_base_and_the_token);
    suite_add_tcase(s, t);
    return s;
}
